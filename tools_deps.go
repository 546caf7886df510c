//go:build tools

package main

import (
	_ "github.com/anthropics/anthropic-sdk-go/v2"
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/google/go-github/v66/github"
	_ "github.com/openai/openai-go/v3"
	_ "github.com/sethvargo/go-githubactions"
	_ "github.com/shurcooL/githubv4"
	_ "golang.org/x/tools/txtar"
	_ "gopkg.in/yaml.v3"
)

func main() {}
