from http import HTTPStatus
from typing import Any
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_detail import ErrorDetail
from ...models.repository import Repository
from ...models.validation_error_body import ValidationErrorBody
from ...types import Response


def _get_kwargs(
    code_host: str,
    integration_id: UUID,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/integrations/forge/{code_host}/{integration_id}/repos".format(
            code_host=quote(str(code_host), safe=""),
            integration_id=quote(str(integration_id), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorDetail | ValidationErrorBody | list[Repository] | None:
    if response.status_code == 200:
        response_200 = []
        _response_200 = response.json()
        for response_200_item_data in _response_200:
            response_200_item = Repository.from_dict(response_200_item_data)

            response_200.append(response_200_item)

        return response_200

    if response.status_code == 401:
        response_401 = ErrorDetail.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = ErrorDetail.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = ErrorDetail.from_dict(response.json())

        return response_404

    if response.status_code == 422:
        response_422 = ValidationErrorBody.from_dict(response.json())

        return response_422

    if response.status_code == 429:
        response_429 = ErrorDetail.from_dict(response.json())

        return response_429

    if response.status_code == 500:
        response_500 = ErrorDetail.from_dict(response.json())

        return response_500

    if response.status_code == 502:
        response_502 = ErrorDetail.from_dict(response.json())

        return response_502

    if response.status_code == 503:
        response_503 = ErrorDetail.from_dict(response.json())

        return response_503

    if response.status_code == 504:
        response_504 = ErrorDetail.from_dict(response.json())

        return response_504

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[ErrorDetail | ValidationErrorBody | list[Repository]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    code_host: str,
    integration_id: UUID,
    *,
    client: AuthenticatedClient | Client,
) -> Response[ErrorDetail | ValidationErrorBody | list[Repository]]:
    """List the repositories of a code-host integration

    Args:
        code_host (str):
        integration_id (UUID):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorDetail | ValidationErrorBody | list[Repository]]
    """

    kwargs = _get_kwargs(
        code_host=code_host,
        integration_id=integration_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    code_host: str,
    integration_id: UUID,
    *,
    client: AuthenticatedClient | Client,
) -> ErrorDetail | ValidationErrorBody | list[Repository] | None:
    """List the repositories of a code-host integration

    Args:
        code_host (str):
        integration_id (UUID):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorDetail | ValidationErrorBody | list[Repository]
    """

    return sync_detailed(
        code_host=code_host,
        integration_id=integration_id,
        client=client,
    ).parsed


async def asyncio_detailed(
    code_host: str,
    integration_id: UUID,
    *,
    client: AuthenticatedClient | Client,
) -> Response[ErrorDetail | ValidationErrorBody | list[Repository]]:
    """List the repositories of a code-host integration

    Args:
        code_host (str):
        integration_id (UUID):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorDetail | ValidationErrorBody | list[Repository]]
    """

    kwargs = _get_kwargs(
        code_host=code_host,
        integration_id=integration_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    code_host: str,
    integration_id: UUID,
    *,
    client: AuthenticatedClient | Client,
) -> ErrorDetail | ValidationErrorBody | list[Repository] | None:
    """List the repositories of a code-host integration

    Args:
        code_host (str):
        integration_id (UUID):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorDetail | ValidationErrorBody | list[Repository]
    """

    return (
        await asyncio_detailed(
            code_host=code_host,
            integration_id=integration_id,
            client=client,
        )
    ).parsed
