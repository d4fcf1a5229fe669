package remote

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
)

// RunLocal runs perflab args on this machine under the same watchdog agent
// a remote host gets (a private directory for the command's store and
// scratch files, the runs it stored sent back as an export, everything
// removed when it ends), without SSH: for inventory hosts with
// ansible_connection=local, which Ansible too runs on the controller.
// Cancelling ctx closes the agent's stdin, which stops the command (it
// stores partial work) and waits up to 20 s before killing it.
func RunLocal(ctx context.Context, args []string, export bool, stdout, stderr io.Writer) (*Result, error) {
	return RunLocalSpec(ctx, RunSpec{Args: args, Export: export}, stdout, stderr)
}

// RunLocalSpec is RunLocal with the snapshot option.
func RunLocalSpec(ctx context.Context, spec RunSpec, stdout, stderr io.Writer) (*Result, error) {
	args := spec.Args
	self, err := os.Executable()
	if err != nil {
		return nil, &Error{Kind: KindNoBinary, Target: "local", Msg: err.Error()}
	}
	cmdArgs := []string{AgentName}
	if spec.Export {
		cmdArgs = append(cmdArgs, "--export")
	}
	if spec.Snapshot {
		cmdArgs = append(cmdArgs, "--snapshot")
	}
	if len(args) > 0 {
		cmdArgs = append(append(cmdArgs, "--"), args...)
	}
	c := exec.Command(self, cmdArgs...)
	in, err := c.StdinPipe()
	if err != nil {
		return nil, err
	}
	outp, err := c.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var agentErr bytes.Buffer
	c.Stderr = &limitedBuffer{b: &agentErr, n: 4096}
	if err := c.Start(); err != nil {
		return nil, &Error{Kind: KindFailed, Target: "local", Msg: "starting perflab: " + err.Error()}
	}
	defer superviseAgent(ctx, in, func() { _ = c.Process.Kill() })()
	res, got := readFrames(outp, stdout, stderr)
	waitErr := c.Wait()
	in.Close()
	if got {
		return res, nil
	}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	msg := oneLine(agentErr.String())
	if msg == "" && waitErr != nil {
		msg = waitErr.Error()
	}
	return res, &Error{Kind: KindFailed, Target: "local", Msg: "local perflab failed: " + msg}
}
