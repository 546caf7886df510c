// Package docslinks holds TestDocsLinks, the check that the README and the
// pages under docs/ have no dead link: every relative link names a file or
// directory that exists, every #anchor names a heading of the page it points
// into (by GitHub's rules for heading anchors), and every page under docs/
// can be reached from the README by following links.
//
//	go test ./tools/docslinks -run TestDocsLinks
//
// It reads Markdown as text and needs no network: links to other sites are
// not followed.
package docslinks
