package tune

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// accessW checks write access the way the kernel will judge the write:
// access(2) reports EROFS for a read-only /proc/sys (containers) and EACCES
// without the right capability, before anything is changed.
func accessW(p, show string) error {
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("the kernel has no %s", show)
	}
	switch err := unix.Access(p, unix.W_OK); {
	case err == nil:
		return nil
	case errors.Is(err, unix.EROFS):
		return fmt.Errorf("%s is on a read-only filesystem (a container?)", show)
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		return fmt.Errorf("no permission to write %s (run as root)", show)
	default:
		return fmt.Errorf("%s: %v", show, err)
	}
}
