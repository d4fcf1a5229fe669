package snapshot

// TODO(helper): implement.
func collectNet(c *collector) {}
