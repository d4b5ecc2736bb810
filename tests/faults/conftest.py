from tests.faults.fixtures import own_redis, shared_gunicorn, start_gunicorn

__all__ = ["own_redis", "shared_gunicorn", "start_gunicorn"]
