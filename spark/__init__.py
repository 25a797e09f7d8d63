"""The Spark pipeline: executors parse segments into Arrow, transforms rebuild histories and flag findings."""
