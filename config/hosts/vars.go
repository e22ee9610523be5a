package hosts

import (
	"fmt"
	"path/filepath"
	"strings"
)

// varStyle is the variable syntax a host expands in its values. translate
// rewrites a host's string into mcpx's syntax: ${VAR}, ${VAR:-default},
// ${input:ID}, and $${ for a literal "${". Text a host takes literally stays
// literal.
type varStyle struct {
	dollarBrace bool // ${VAR} and ${VAR:-default} (Claude Code, Gemini)
	envColon    bool // ${env:VAR} (VS Code, Cursor, Windsurf)
	vscode      bool // ${workspaceFolder}, ${userHome}, ${input:ID}, ...
	bareDollar  bool // $VAR (Gemini)
	braceEnv    bool // {env:VAR} (opencode)
}

// literal is a host that expands nothing.
var literal = varStyle{}

func (st varStyle) any() bool {
	return st.dollarBrace || st.envColon || st.vscode || st.bareDollar || st.braceEnv
}

// translate rewrites s; an error names a form the host knows but mcpx
// cannot honour, or a form the host does not know.
func (st varStyle) translate(s string, c *Context) (string, error) {
	if !strings.ContainsAny(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case st.braceEnv && s[i] == '{' && (i == 0 || s[i-1] != '$'):
			end := strings.IndexByte(s[i:], '}')
			body := ""
			if end > 0 {
				body = s[i+1 : i+end]
			}
			switch {
			case strings.HasPrefix(body, "env:") && validName(body[4:]):
				b.WriteString("${" + body[4:] + "}")
				i += end
			case strings.HasPrefix(body, "file:"):
				return "", fmt.Errorf("{%s} (a file's contents) is not supported by mcpx; use {env:NAME}", body)
			default:
				b.WriteByte('{')
			}
		case s[i] == '$' && strings.HasPrefix(s[i:], "${"):
			end := strings.IndexByte(s[i:], '}')
			if end < 0 || !st.any() {
				b.WriteString("$${")
				i++
				continue
			}
			body := s[i+2 : i+end]
			out, err := st.brace(body, c)
			if err != nil {
				return "", err
			}
			b.WriteString(out)
			i += end
		case s[i] == '$' && st.bareDollar && i+1 < len(s) && nameStart(s[i+1]):
			j := i + 1
			for j < len(s) && nameChar(s[j]) {
				j++
			}
			b.WriteString("${" + s[i+1:j] + "}")
			i = j - 1
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}

// brace translates the body of one ${...}.
func (st varStyle) brace(body string, c *Context) (string, error) {
	name, def, hasDef := strings.Cut(body, ":-")
	switch {
	case st.dollarBrace && validName(name):
		if hasDef {
			return "${" + name + ":-" + def + "}", nil
		}
		return "${" + name + "}", nil
	case st.envColon && strings.HasPrefix(body, "env:") && validName(body[4:]):
		return "${" + body[4:] + "}", nil
	}
	if st.vscode {
		switch {
		case body == "userHome":
			return "${HOME}", nil
		case body == "pathSeparator" || body == "/":
			return string(filepath.Separator), nil
		case body == "workspaceFolder" || body == "workspaceRoot":
			if c.Root == "" {
				return "", fmt.Errorf("${%s} has no meaning in a user-level file (there is no workspace)", body)
			}
			return lit(c.Root), nil
		case body == "workspaceFolderBasename":
			if c.Root == "" {
				return "", fmt.Errorf("${%s} has no meaning in a user-level file (there is no workspace)", body)
			}
			return lit(filepath.Base(c.Root)), nil
		case strings.HasPrefix(body, "input:") && validInput(body[6:]):
			return "${" + body + "}", nil
		}
	}
	return "", fmt.Errorf("${%s} is not a variable form mcpx knows for this host", body)
}

// lit escapes a literal for mcpx's syntax.
func lit(s string) string { return strings.ReplaceAll(s, "${", "$${") }

func nameStart(c byte) bool { return c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' }
func nameChar(c byte) bool  { return nameStart(c) || c >= '0' && c <= '9' }

func validName(s string) bool {
	if s == "" || !nameStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !nameChar(s[i]) {
			return false
		}
	}
	return true
}

func validInput(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !nameChar(s[i]) && s[i] != '-' && s[i] != '.' {
			return false
		}
	}
	return true
}
