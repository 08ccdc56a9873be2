from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="OAuthProvider")


@_attrs_define
class OAuthProvider:
    """An OAuth provider record (spec 2.1). It carries no client secret.

    Attributes:
        id (str):
        organization_id (str):
        provider_id (str):
        name (str):
        client_id (str):
        auth_url (str):
        token_url (str):
        uses_pkce (bool):
        code_challenge_method (None | str):
        created_at (datetime.datetime):
        updated_at (datetime.datetime):
        provider_type (None | str | Unset):
        mcp_server_url (None | str | Unset):
        token_endpoint_auth_method (str | Unset):  Default: 'client_secret_post'.
        is_dynamic_client (bool | Unset):  Default: False.
    """

    id: str
    organization_id: str
    provider_id: str
    name: str
    client_id: str
    auth_url: str
    token_url: str
    uses_pkce: bool
    code_challenge_method: None | str
    created_at: datetime.datetime
    updated_at: datetime.datetime
    provider_type: None | str | Unset = UNSET
    mcp_server_url: None | str | Unset = UNSET
    token_endpoint_auth_method: str | Unset = "client_secret_post"
    is_dynamic_client: bool | Unset = False
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        organization_id = self.organization_id

        provider_id = self.provider_id

        name = self.name

        client_id = self.client_id

        auth_url = self.auth_url

        token_url = self.token_url

        uses_pkce = self.uses_pkce

        code_challenge_method: None | str
        code_challenge_method = self.code_challenge_method

        created_at = self.created_at.isoformat()

        updated_at = self.updated_at.isoformat()

        provider_type: None | str | Unset
        if isinstance(self.provider_type, Unset):
            provider_type = UNSET
        else:
            provider_type = self.provider_type

        mcp_server_url: None | str | Unset
        if isinstance(self.mcp_server_url, Unset):
            mcp_server_url = UNSET
        else:
            mcp_server_url = self.mcp_server_url

        token_endpoint_auth_method = self.token_endpoint_auth_method

        is_dynamic_client = self.is_dynamic_client

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "organization_id": organization_id,
                "provider_id": provider_id,
                "name": name,
                "client_id": client_id,
                "auth_url": auth_url,
                "token_url": token_url,
                "uses_pkce": uses_pkce,
                "code_challenge_method": code_challenge_method,
                "created_at": created_at,
                "updated_at": updated_at,
            }
        )
        if provider_type is not UNSET:
            field_dict["provider_type"] = provider_type
        if mcp_server_url is not UNSET:
            field_dict["mcp_server_url"] = mcp_server_url
        if token_endpoint_auth_method is not UNSET:
            field_dict["token_endpoint_auth_method"] = token_endpoint_auth_method
        if is_dynamic_client is not UNSET:
            field_dict["is_dynamic_client"] = is_dynamic_client

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        organization_id = d.pop("organization_id")

        provider_id = d.pop("provider_id")

        name = d.pop("name")

        client_id = d.pop("client_id")

        auth_url = d.pop("auth_url")

        token_url = d.pop("token_url")

        uses_pkce = d.pop("uses_pkce")

        def _parse_code_challenge_method(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        code_challenge_method = _parse_code_challenge_method(
            d.pop("code_challenge_method")
        )

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        def _parse_provider_type(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        provider_type = _parse_provider_type(d.pop("provider_type", UNSET))

        def _parse_mcp_server_url(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        mcp_server_url = _parse_mcp_server_url(d.pop("mcp_server_url", UNSET))

        token_endpoint_auth_method = d.pop("token_endpoint_auth_method", UNSET)

        is_dynamic_client = d.pop("is_dynamic_client", UNSET)

        o_auth_provider = cls(
            id=id,
            organization_id=organization_id,
            provider_id=provider_id,
            name=name,
            client_id=client_id,
            auth_url=auth_url,
            token_url=token_url,
            uses_pkce=uses_pkce,
            code_challenge_method=code_challenge_method,
            created_at=created_at,
            updated_at=updated_at,
            provider_type=provider_type,
            mcp_server_url=mcp_server_url,
            token_endpoint_auth_method=token_endpoint_auth_method,
            is_dynamic_client=is_dynamic_client,
        )

        o_auth_provider.additional_properties = d
        return o_auth_provider

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
