// Package hello greets people.
package hello
