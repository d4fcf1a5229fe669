package snapshot

// TODO(helper): implement.
func collectCgroup(c *collector) {}
