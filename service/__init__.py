"""Rummikub Referee: an HTTP service that referees Rummikub."""
