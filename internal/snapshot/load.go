package snapshot

// TODO(helper): implement.
func collectLoad(c *collector) {}
