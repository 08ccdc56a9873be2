"""Contains endpoint functions for accessing the API.

`<operation>_request_kwargs(...)` builds an operation's request (method, URL, query) from
its arguments, as the operation's own functions do, for callers that send the request
themselves and read the raw body (dims' fetch layer). Made by dims' custom template.
"""

from .list_deployments import _get_kwargs as list_deployments_request_kwargs

__all__ = [
    "list_deployments_request_kwargs",
]
