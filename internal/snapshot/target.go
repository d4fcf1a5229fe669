package snapshot

import (
	"encoding/json"
	"os"
)

// EnvTarget is the environment variable through which perflab tells a copy
// of itself that it was started inside a container (bench --container): the
// JSON of the Container it runs in. A live snapshot of such a process's own
// view records it, so every run measured there carries the container.
const EnvTarget = "PERFLAB_TARGET"

// targetFromEnv is the container this process was started in, or nil.
func targetFromEnv() *Container {
	v := os.Getenv(EnvTarget)
	if v == "" {
		return nil
	}
	var c Container
	if json.Unmarshal([]byte(v), &c) != nil {
		return nil
	}
	return &c
}
