package snapshot

// TODO(helper): implement.
func collectServices(c *collector) {}
