// Package bye bids people farewell.
package bye
