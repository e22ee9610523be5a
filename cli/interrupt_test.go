package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The helper process for the tests below: MCPX_INTERRUPT_CHILD says which
// handler to take before sending itself SIGINT.
func init() {
	switch os.Getenv("MCPX_INTERRUPT_CHILD") {
	case "context":
		ctx, stop := interruptible(context.Background())
		syscall.Kill(os.Getpid(), syscall.SIGINT)
		select {
		case <-ctx.Done():
			fmt.Println("cancelled")
		case <-time.After(10 * time.Second):
			fmt.Println("not cancelled")
		}
		stop()
		endBySignal()
		os.Exit(ExitInterrupted) // reached only if the signal did not end us
	case "cleanup":
		atInterrupt(func() { fmt.Println("restored") })
		syscall.Kill(os.Getpid(), syscall.SIGINT)
		time.Sleep(10 * time.Second) // a read nothing cancels
		os.Exit(0)
	}
}

func TestInterruptEndsBySignalAfterCleanup(t *testing.T) {
	for mode, want := range map[string]string{"context": "cancelled", "cleanup": "restored"} {
		t.Run(mode, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run", "^$")
			cmd.Env = append(os.Environ(), "MCPX_INTERRUPT_CHILD="+mode)
			out, err := cmd.Output()
			if strings.TrimSpace(string(out)) != want {
				t.Errorf("output %q, want %q", out, want)
			}
			ee, ok := err.(*exec.ExitError)
			if !ok {
				t.Fatalf("exit: %v; want the process ended by SIGINT", err)
			}
			if ws := ee.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGINT {
				t.Fatalf("exit: %v; want the process ended by SIGINT", err)
			}
		})
	}
}
