package snapshot

// TODO(helper): implement.
func collectTools(c *collector) {}
