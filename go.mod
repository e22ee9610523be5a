module github.com/mcpx-dev/mcpx

go 1.26.0

require (
	github.com/coreos/go-systemd/v22 v22.7.0
	github.com/danieljoos/wincred v1.2.3 // indirect
	github.com/ebitengine/purego v0.11.3
	github.com/gofrs/flock v0.13.2
	github.com/mark3labs/mcp-go v1.2.1
	golang.org/x/sys v0.50.0
)

require (
	github.com/godbus/dbus/v5 v5.2.4
	github.com/google/jsonschema-go v0.4.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/mattn/go-isatty v0.0.24
	github.com/pelletier/go-toml/v2 v2.4.3
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	github.com/spf13/cast v1.7.1 // indirect
	github.com/tailscale/hujson v0.0.0-20260727124030-b80ff77dac4f
	github.com/urfave/cli/v3 v3.14.0
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	github.com/zalando/go-keyring v0.2.8
	golang.org/x/text v0.44.0
)
