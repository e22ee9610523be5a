package cli

import (
	"context"

	ucli "github.com/urfave/cli/v3"
)

// enableCompletion turns on urfave/cli's shell completion for root: the
// `completion bash|zsh|fish|pwsh` command prints a script that asks
// `mcpx --generate-shell-completion` for the words at each position, so
// commands, subcommands and flags complete from the live command tree.
// The command is listed in help (urfave hides it by default).
func enableCompletion(root *ucli.Command) {
	root.EnableShellCompletion = true
	root.ConfigureShellCompletionCommand = func(c *ucli.Command) {
		c.Hidden = false
		c.Action = groupAction
		c.OnUsageError = func(_ context.Context, cmd *ucli.Command, err error, _ bool) error {
			return flagError(cmd, err, nil)
		}
		c.Usage = "print a shell completion script: mcpx completion bash|zsh|fish|pwsh"
		c.Description = "Source the output to complete mcpx commands and flags:\n\n" +
			"  bash:  source <(mcpx completion bash)     (in ~/.bashrc)\n" +
			"  zsh:   source <(mcpx completion zsh)      (in ~/.zshrc)\n" +
			"  fish:  mcpx completion fish > ~/.config/fish/completions/mcpx.fish"
	}
}
