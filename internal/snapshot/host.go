package snapshot

// TODO(helper): implement.
func collectHost(c *collector) {}
