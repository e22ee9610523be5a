package cli

import (
	ucli "github.com/urfave/cli/v3"
)

// configSubcommands are `config add`, `config remove` and `config import`.
func configSubcommands(a *App) []*ucli.Command {
	return nil
}
