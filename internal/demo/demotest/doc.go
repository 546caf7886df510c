// Package demotest holds the demo's worlds that only tests play: the
// return-to-stage world (NewReturnWorld), the Python item
// (NewPythonIssueWorld), three staged items in one repository
// (NewTrioWorld) and the hostile agent's fixtures (WriteHostileFixtures).
// They are built on internal/demo's hooks (Sample, NewSampleWorld,
// NewWorldFrom, SampleFiles), and no file of the product imports this
// package, so the roadmap binary holds none of them
// (TestProvingFloorOutOfBinary).
package demotest

import "embed"

// samples are the test-only samples' repositories and recorded exchanges.
//
//go:embed all:testdata/python all:testdata/trio
var samples embed.FS
