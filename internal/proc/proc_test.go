package proc

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

func TestAlive(t *testing.T) {
	if !Alive(os.Getpid()) {
		t.Fatal("this process is not alive")
	}
	if Alive(0) || Alive(-1) {
		t.Fatal("pid 0 or -1 alive")
	}
	// A child that exited but is not yet reaped is a zombie: not alive.
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	deadline := time.Now().Add(10 * time.Second)
	for !zombie(pid) {
		if time.Now().After(deadline) {
			t.Fatal("the exited child never showed as a zombie")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if Alive(pid) {
		t.Fatal("a zombie counts as alive")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if Alive(pid) {
		t.Fatal("a reaped child counts as alive")
	}
}
