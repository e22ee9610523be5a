package cli

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/mcpx-dev/mcpx/config"
)

// asker asks for VS Code inputs (${input:ID}) on a terminal, without echo
// for password inputs. Without a terminal there is nobody to ask: nil, and
// the daemon's refusal names the input.
func (a *App) asker() func(config.Input) (string, error) {
	if !a.Terminal {
		return nil
	}
	return func(in config.Input) (string, error) {
		prompt := in.ID
		if in.Description != "" {
			prompt = fmt.Sprintf("%s (%s)", in.Description, in.ID)
		}
		fmt.Fprintf(a.Stderr, "mcpx: %s: ", prompt)
		if in.Password {
			if f, ok := a.Stdin.(*os.File); ok {
				restore, err := noEcho(f)
				if err == nil {
					// Nothing cancels the read: an interrupt restores
					// the echo and ends mcpx.
					stop := atInterrupt(func() { restore(); fmt.Fprintln(a.Stderr) })
					defer func() { stop(); restore(); fmt.Fprintln(a.Stderr) }()
				}
			}
		}
		line, err := bufio.NewReader(a.Stdin).ReadString('\n')
		if err != nil && line == "" {
			return "", errors.New("no answer")
		}
		return strings.TrimRight(line, "\r\n"), nil
	}
}
