"""Contains endpoint functions for accessing the API.

`<operation>_request_kwargs(...)` builds an operation's request (method, URL, query) from
its arguments, as the operation's own functions do, for callers that send the request
themselves and read the raw body (dims' fetch layer). Made by dims' custom template.
"""

from .list_integration_repositories import (
    _get_kwargs as list_integration_repositories_request_kwargs,
)

__all__ = [
    "list_integration_repositories_request_kwargs",
]
