package snapshot

// TODO(helper): implement.
func collectLimits(c *collector) {}
