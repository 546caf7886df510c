// Package redact masks secrets in text before it leaves the process: issue
// bodies, comments, PR text, commit statuses, traces, artifacts and job logs.
//
// A Masker combines three kinds of knowledge. The exact values of configured
// secrets (and their base64, JSON and URL-escaped, hex, percent-encoded and
// reversed forms, whole or in pieces across blanks, lines and zero-width
// characters) are found with one Aho-Corasick pass. Known secret families (GitHub, AWS, OpenAI, Anthropic,
// Slack, PEM private keys, JWTs, Authorization headers, passwords in URLs,
// secret-looking key=value pairs) are found with precompiled patterns that run
// only on lines a cheap keyword prefilter selects. Private host names and
// private-range IP addresses are found by small hand-written scanners. Masks
// favour recall; ordinary text (git SHAs, UUIDs, paths, Go code) passes byte
// for byte.
//
// Text is masked line by line, streamed, with memory bounded by the longest
// line it keeps (64 KiB); longer lines are masked in overlapping windows,
// and a secret across a window edge is masked like one inside a window.
// Masking is idempotent: masking masked text changes nothing. docs/redact.md
// describes the rules and their limits.
package redact
