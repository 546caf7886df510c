package faults

import (
	"context"
	"os"
	"testing"
)

func TestFaultsOne(t *testing.T) {
	s, err := Run(context.Background(), Options{Seeds: 1, Only: os.Getenv("FAULTS_ONLY"), Progress: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	s.Print(os.Stderr)
}
