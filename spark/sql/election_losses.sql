/*
[table]
doc = "Per diverged pair of replicas (divergence_facts), the offsets the loser lost and on which broker."
applies = "replicas_possible"
columns = """
cluster_id string, topic string, partition int, a_epoch int, b_epoch int, lost_offsets array<bigint>,
lost_on string"""
*/
SELECT cluster_id, topic, partition, a_epoch, b_epoch, lost_offsets, broker AS lost_on FROM divergence_facts
