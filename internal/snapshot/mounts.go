package snapshot

// TODO(helper): implement.
func collectMounts(c *collector) {}
