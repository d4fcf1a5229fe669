package snapshot

// TODO(helper): implement.
func collectSysctl(c *collector) {}
