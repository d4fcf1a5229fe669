package cli

import (
	"slices"
	"testing"

	"github.com/spf13/cobra"
)

// TestRemoteFormatFollowsOutput: 'snapshot --on HOST -o x.json' must get
// JSON from the remote, as the local -o x.json does.
func TestRemoteFormatFollowsOutput(t *testing.T) {
	mk := func(args ...string) *cobra.Command {
		c := &cobra.Command{Use: "snapshot", RunE: func(*cobra.Command, []string) error { return nil }}
		c.Flags().String("format", "text", "")
		c.Flags().StringP("output", "o", "", "")
		c.SetArgs(args)
		if err := c.ParseFlags(args); err != nil {
			t.Fatal(err)
		}
		return c
	}
	if got := remoteFormat(mk("-o", "x.json"), []string{"snapshot"}, "x.json"); !slices.Equal(got, []string{"snapshot", "--format", "json"}) {
		t.Errorf("-o x.json forwards %v", got)
	}
	if got := remoteFormat(mk("-o", "x.json", "--format", "text"), []string{"snapshot", "--format", "text"}, "x.json"); slices.Contains(got, "json") {
		t.Errorf("an explicit --format text was overridden: %v", got)
	}
	if got := remoteFormat(mk("-o", "x.txt"), []string{"snapshot"}, "x.txt"); len(got) != 1 {
		t.Errorf("-o x.txt forwards %v", got)
	}
}
