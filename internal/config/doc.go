// Package config reads .github/roadmap.yml, the configuration a user keeps in
// their repository: models and the ladder, budgets, the shell policy table,
// check commands, labels and the implement loop's timings. Every key has a
// default; a bad file fails fast with an error naming the file, line and key.
// The keys, their types and fixed words are a JSON Schema generated from
// Config (roadmap.schema.json, `go generate`), which Parse validates against
// and editors complete from; what a schema cannot say is checked by hand.
package config
