/*
[table]
doc = """Each finding of an incident with what its story and plan need: the finding's columns, the finding it follows
from (`caused_by`) and the link rule, its facts (finding_facts), and `is_root` (the incident's cause)."""
keep = true
like = "finding_rows"
columns = """
incident_id string, caused_by string, rule string, is_root boolean, log_dir string, partition_dir string,
intact_on string"""
*/
SELECT f.*, m.incident_id, m.caused_by, m.rule, m.incident_id = f.finding_id AS is_root, x.log_dir,
       x.partition_dir, x.intact_on
-- ON, not USING: f.* keeps finding_rows' column order (USING would put finding_id first)
FROM incident_members m JOIN finding_rows f ON f.finding_id = m.finding_id
LEFT JOIN finding_facts x ON x.finding_id = f.finding_id
