// Package greet says hello and goodbye.
package greet
