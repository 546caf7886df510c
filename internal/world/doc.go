// Package world builds the surroundings a roadmap Job meets, out of the real
// parts DESIGN §8 names: the stateful fake GitHub (internal/githubfake)
// served on loopback for the real client, a bare git remote seeded with a
// sample repository and cloned into fresh workspaces as a new runner would,
// the replay model served over the OpenAI-compatible API, and the issue the
// Jobs work on. The demo, the evals, the fault suite and the runners' tests
// all stand in one such world; what differs between them (the clock, the
// seed files, the issue, the recorded exchanges, the fault rules they add to
// the fake) is an option or a call, so a fix to how the world is built is
// made once. GitEnv is the one hermetic environment every git of a world
// runs with. A Job on the world is built as the binary builds one: Setup is
// the job.Setup a workflow step would give (the shipped configuration with
// the replay model as its one tier), and OpenJob opens it with job.Open.
package world
