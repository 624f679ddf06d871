#!/usr/bin/env bash
# Creates the service's topics before any replica starts. deploy/docker-compose.yml runs it once
# in the kafka-init container (the apache/kafka image, for kafka-topics.sh) with the same
# STREAMNB_* variables the service reads, so topic names are defined in one place.
set -euo pipefail

topics=/opt/kafka/bin/kafka-topics.sh
bootstrap="${STREAMNB_BOOTSTRAP_SERVERS:?}"
# Partitions bound the number of replicas that share the work: a consumer group gives each
# partition to one member, so replicas beyond the partition count sit idle.
partitions="${TOPIC_PARTITIONS:-4}"
replication="${REPLICATION_FACTOR:-1}"

create() {
    local topic="$1"
    shift
    "$topics" --bootstrap-server "$bootstrap" --create --if-not-exists --topic "$topic" \
        --partitions "$partitions" --replication-factor "$replication" "$@"
}

create "${STREAMNB_INPUT_TOPIC:?}"
create "${STREAMNB_OUTPUT_TOPIC:?}"
create "${STREAMNB_DEAD_LETTER_TOPIC:?}"
# The changelog holds each input partition's latest statistics, keyed by partition: compacted so
# that only the last state per key is kept, and allowed records of up to 64 MiB (Kafka's default
# is 1 MiB) because a record is a whole partition's counts.
create "${STREAMNB_CHANGELOG_TOPIC:?}" --config cleanup.policy=compact \
    --config max.message.bytes="${CHANGELOG_MAX_MESSAGE_BYTES:-67108864}"

"$topics" --bootstrap-server "$bootstrap" --describe --topic "$STREAMNB_INPUT_TOPIC"
