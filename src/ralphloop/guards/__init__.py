"""Guards on a run: rate limits, budgets, backoff and the circuit breaker."""
