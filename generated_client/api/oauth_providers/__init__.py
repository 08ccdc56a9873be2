"""Contains endpoint functions for accessing the API.

`<operation>_request_kwargs(...)` builds an operation's request (method, URL, query) from
its arguments, as the operation's own functions do, for callers that send the request
themselves and read the raw body (dims' fetch layer). Made by dims' custom template.
"""

from .get_oauth_provider import _get_kwargs as get_oauth_provider_request_kwargs
from .list_oauth_providers import _get_kwargs as list_oauth_providers_request_kwargs

__all__ = [
    "get_oauth_provider_request_kwargs",
    "list_oauth_providers_request_kwargs",
]
