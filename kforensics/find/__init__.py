"""`kforensics find`: every copy of a record on the disks, and what became of it.

No Spark and no click here: `query` says what is looked for, `sources` which partition dirs of the inputs are
searched, `search`'s `PartitionSearch` searches one partition dir (the compiled reader applies the query inside the
records) and judges each copy's fate, `output` gives each copy export's record shape, `run` searches in this
process or on Spark (spark/find.py runs the same search, one task per partition dir), `from_finding` reads the keys
a scan's finding names.
"""
