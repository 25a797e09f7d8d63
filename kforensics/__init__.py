"""kforensics: forensics for Apache Kafka broker disks."""

__version__ = "0.1.0"
