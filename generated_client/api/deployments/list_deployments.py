from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.deployment_page import DeploymentPage
from ...models.deployment_type import DeploymentType
from ...models.error_detail import ErrorDetail
from ...models.validation_error_body import ValidationErrorBody
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    limit: int | Unset = 20,
    offset: int | Unset = 0,
    name_contains: None | str | Unset = UNSET,
    status: None | str | Unset = UNSET,
    remote_reconciled: bool | None | Unset = UNSET,
    tag_value_ids: None | str | Unset = UNSET,
    image_version: None | str | Unset = UNSET,
    deployment_type: DeploymentType | None | Unset = UNSET,
    deployment_ids: None | str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["limit"] = limit

    params["offset"] = offset

    json_name_contains: None | str | Unset
    if isinstance(name_contains, Unset):
        json_name_contains = UNSET
    else:
        json_name_contains = name_contains
    params["name_contains"] = json_name_contains

    json_status: None | str | Unset
    if isinstance(status, Unset):
        json_status = UNSET
    else:
        json_status = status
    params["status"] = json_status

    json_remote_reconciled: bool | None | Unset
    if isinstance(remote_reconciled, Unset):
        json_remote_reconciled = UNSET
    else:
        json_remote_reconciled = remote_reconciled
    params["remote_reconciled"] = json_remote_reconciled

    json_tag_value_ids: None | str | Unset
    if isinstance(tag_value_ids, Unset):
        json_tag_value_ids = UNSET
    else:
        json_tag_value_ids = tag_value_ids
    params["tag_value_ids"] = json_tag_value_ids

    json_image_version: None | str | Unset
    if isinstance(image_version, Unset):
        json_image_version = UNSET
    else:
        json_image_version = image_version
    params["image_version"] = json_image_version

    json_deployment_type: None | str | Unset
    if isinstance(deployment_type, Unset):
        json_deployment_type = UNSET
    elif isinstance(deployment_type, DeploymentType):
        json_deployment_type = deployment_type.value
    else:
        json_deployment_type = deployment_type
    params["deployment_type"] = json_deployment_type

    json_deployment_ids: None | str | Unset
    if isinstance(deployment_ids, Unset):
        json_deployment_ids = UNSET
    else:
        json_deployment_ids = deployment_ids
    params["deployment_ids"] = json_deployment_ids

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v2/deployments",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> DeploymentPage | ErrorDetail | ValidationErrorBody | None:
    if response.status_code == 200:
        response_200 = DeploymentPage.from_dict(response.json())

        return response_200

    if response.status_code == 401:
        response_401 = ErrorDetail.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = ErrorDetail.from_dict(response.json())

        return response_403

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
) -> Response[DeploymentPage | ErrorDetail | ValidationErrorBody]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    limit: int | Unset = 20,
    offset: int | Unset = 0,
    name_contains: None | str | Unset = UNSET,
    status: None | str | Unset = UNSET,
    remote_reconciled: bool | None | Unset = UNSET,
    tag_value_ids: None | str | Unset = UNSET,
    image_version: None | str | Unset = UNSET,
    deployment_type: DeploymentType | None | Unset = UNSET,
    deployment_ids: None | str | Unset = UNSET,
) -> Response[DeploymentPage | ErrorDetail | ValidationErrorBody]:
    """List deployments (offset pagination)

    Args:
        limit (int | Unset):  Default: 20.
        offset (int | Unset):  Default: 0.
        name_contains (None | str | Unset):
        status (None | str | Unset):
        remote_reconciled (bool | None | Unset):
        tag_value_ids (None | str | Unset):
        image_version (None | str | Unset):
        deployment_type (DeploymentType | None | Unset):
        deployment_ids (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeploymentPage | ErrorDetail | ValidationErrorBody]
    """

    kwargs = _get_kwargs(
        limit=limit,
        offset=offset,
        name_contains=name_contains,
        status=status,
        remote_reconciled=remote_reconciled,
        tag_value_ids=tag_value_ids,
        image_version=image_version,
        deployment_type=deployment_type,
        deployment_ids=deployment_ids,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    limit: int | Unset = 20,
    offset: int | Unset = 0,
    name_contains: None | str | Unset = UNSET,
    status: None | str | Unset = UNSET,
    remote_reconciled: bool | None | Unset = UNSET,
    tag_value_ids: None | str | Unset = UNSET,
    image_version: None | str | Unset = UNSET,
    deployment_type: DeploymentType | None | Unset = UNSET,
    deployment_ids: None | str | Unset = UNSET,
) -> DeploymentPage | ErrorDetail | ValidationErrorBody | None:
    """List deployments (offset pagination)

    Args:
        limit (int | Unset):  Default: 20.
        offset (int | Unset):  Default: 0.
        name_contains (None | str | Unset):
        status (None | str | Unset):
        remote_reconciled (bool | None | Unset):
        tag_value_ids (None | str | Unset):
        image_version (None | str | Unset):
        deployment_type (DeploymentType | None | Unset):
        deployment_ids (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeploymentPage | ErrorDetail | ValidationErrorBody
    """

    return sync_detailed(
        client=client,
        limit=limit,
        offset=offset,
        name_contains=name_contains,
        status=status,
        remote_reconciled=remote_reconciled,
        tag_value_ids=tag_value_ids,
        image_version=image_version,
        deployment_type=deployment_type,
        deployment_ids=deployment_ids,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    limit: int | Unset = 20,
    offset: int | Unset = 0,
    name_contains: None | str | Unset = UNSET,
    status: None | str | Unset = UNSET,
    remote_reconciled: bool | None | Unset = UNSET,
    tag_value_ids: None | str | Unset = UNSET,
    image_version: None | str | Unset = UNSET,
    deployment_type: DeploymentType | None | Unset = UNSET,
    deployment_ids: None | str | Unset = UNSET,
) -> Response[DeploymentPage | ErrorDetail | ValidationErrorBody]:
    """List deployments (offset pagination)

    Args:
        limit (int | Unset):  Default: 20.
        offset (int | Unset):  Default: 0.
        name_contains (None | str | Unset):
        status (None | str | Unset):
        remote_reconciled (bool | None | Unset):
        tag_value_ids (None | str | Unset):
        image_version (None | str | Unset):
        deployment_type (DeploymentType | None | Unset):
        deployment_ids (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeploymentPage | ErrorDetail | ValidationErrorBody]
    """

    kwargs = _get_kwargs(
        limit=limit,
        offset=offset,
        name_contains=name_contains,
        status=status,
        remote_reconciled=remote_reconciled,
        tag_value_ids=tag_value_ids,
        image_version=image_version,
        deployment_type=deployment_type,
        deployment_ids=deployment_ids,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    limit: int | Unset = 20,
    offset: int | Unset = 0,
    name_contains: None | str | Unset = UNSET,
    status: None | str | Unset = UNSET,
    remote_reconciled: bool | None | Unset = UNSET,
    tag_value_ids: None | str | Unset = UNSET,
    image_version: None | str | Unset = UNSET,
    deployment_type: DeploymentType | None | Unset = UNSET,
    deployment_ids: None | str | Unset = UNSET,
) -> DeploymentPage | ErrorDetail | ValidationErrorBody | None:
    """List deployments (offset pagination)

    Args:
        limit (int | Unset):  Default: 20.
        offset (int | Unset):  Default: 0.
        name_contains (None | str | Unset):
        status (None | str | Unset):
        remote_reconciled (bool | None | Unset):
        tag_value_ids (None | str | Unset):
        image_version (None | str | Unset):
        deployment_type (DeploymentType | None | Unset):
        deployment_ids (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeploymentPage | ErrorDetail | ValidationErrorBody
    """

    return (
        await asyncio_detailed(
            client=client,
            limit=limit,
            offset=offset,
            name_contains=name_contains,
            status=status,
            remote_reconciled=remote_reconciled,
            tag_value_ids=tag_value_ids,
            image_version=image_version,
            deployment_type=deployment_type,
            deployment_ids=deployment_ids,
        )
    ).parsed
