/*
[table]
doc = "The leader changes of partition_history (an election other than `none`, `initial` and `snapshot`, a snapshot's baseline)."
applies = "kraft"
columns = """
cluster_id string, topic string, partition int, leader_epoch bigint, leader int, election string, elected_at bigint"""
*/
SELECT cluster_id, topic, partition, leader_epoch, leader, election, timestamp AS elected_at
FROM partition_history WHERE election NOT IN ('none', 'initial', 'snapshot')
