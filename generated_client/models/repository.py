from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="Repository")


@_attrs_define
class Repository:
    """A repository visible through a code-host integration (spec 2.2).

    Attributes:
        host_integration_id (UUID):
        id (int):
        name (str):
        owner (str):
        url (str):
        default_branch (str):
    """

    host_integration_id: UUID
    id: int
    name: str
    owner: str
    url: str
    default_branch: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        host_integration_id = str(self.host_integration_id)

        id = self.id

        name = self.name

        owner = self.owner

        url = self.url

        default_branch = self.default_branch

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "host_integration_id": host_integration_id,
                "id": id,
                "name": name,
                "owner": owner,
                "url": url,
                "default_branch": default_branch,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        host_integration_id = UUID(d.pop("host_integration_id"))

        id = d.pop("id")

        name = d.pop("name")

        owner = d.pop("owner")

        url = d.pop("url")

        default_branch = d.pop("default_branch")

        repository = cls(
            host_integration_id=host_integration_id,
            id=id,
            name=name,
            owner=owner,
            url=url,
            default_branch=default_branch,
        )

        repository.additional_properties = d
        return repository

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
