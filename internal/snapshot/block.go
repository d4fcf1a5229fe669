package snapshot

// TODO(helper): implement.
func collectBlock(c *collector) {}
