/*
[table]
doc = """Every pair of epoch_ranges of two different segments of the same data partition in the same broker's
metadata, columns prefixed a_ and b_."""
keep = true
columns = """
metadata_broker string, cluster_id string, topic string, partition int, topic_id string,
a_remote_segment_id string, a_segment_leader_epochs string, a_start_offset bigint, a_end_offset bigint,
a_first_event_at bigint, a_file string, a_position bigint, a_epoch int, a_lo bigint, a_hi bigint,
b_remote_segment_id string, b_segment_leader_epochs string, b_start_offset bigint, b_end_offset bigint,
b_first_event_at bigint, b_file string, b_position bigint, b_epoch int, b_lo bigint, b_hi bigint"""
*/
SELECT * FROM (SELECT metadata_broker, cluster_id, topic, partition, topic_id, remote_segment_id AS a_remote_segment_id, segment_leader_epochs AS a_segment_leader_epochs, start_offset AS a_start_offset, end_offset AS a_end_offset, first_event_at AS a_first_event_at, file AS a_file, position AS a_position, epoch AS a_epoch, lo AS a_lo, hi AS a_hi FROM epoch_ranges)
JOIN (SELECT metadata_broker, cluster_id, topic, partition, topic_id, remote_segment_id AS b_remote_segment_id, segment_leader_epochs AS b_segment_leader_epochs, start_offset AS b_start_offset, end_offset AS b_end_offset, first_event_at AS b_first_event_at, file AS b_file, position AS b_position, epoch AS b_epoch, lo AS b_lo, hi AS b_hi FROM epoch_ranges) USING (metadata_broker, cluster_id, topic, partition, topic_id)
WHERE a_remote_segment_id != b_remote_segment_id
