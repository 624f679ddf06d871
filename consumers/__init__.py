"""The Kafka classification service (reading/committing, model state, persistence)."""
