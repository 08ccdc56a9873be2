from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.listener_config import ListenerConfig
    from ..models.resource_spec import ResourceSpec


T = TypeVar("T", bound="SourceConfig")


@_attrs_define
class SourceConfig:
    """
    Attributes:
        integration_id (None | Unset | UUID):
        repo_url (None | str | Unset):
        build_on_push (bool | None | Unset):
        custom_url (None | str | Unset):
        resource_spec (None | ResourceSpec | Unset):
        listener_id (None | Unset | UUID):
        listener_config (ListenerConfig | None | Unset):
        install_command (None | str | Unset):
        build_command (None | str | Unset):
    """

    integration_id: None | Unset | UUID = UNSET
    repo_url: None | str | Unset = UNSET
    build_on_push: bool | None | Unset = UNSET
    custom_url: None | str | Unset = UNSET
    resource_spec: None | ResourceSpec | Unset = UNSET
    listener_id: None | Unset | UUID = UNSET
    listener_config: ListenerConfig | None | Unset = UNSET
    install_command: None | str | Unset = UNSET
    build_command: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.listener_config import ListenerConfig  # noqa: PLC0415
        from ..models.resource_spec import ResourceSpec  # noqa: PLC0415

        integration_id: None | str | Unset
        if isinstance(self.integration_id, Unset):
            integration_id = UNSET
        elif isinstance(self.integration_id, UUID):
            integration_id = str(self.integration_id)
        else:
            integration_id = self.integration_id

        repo_url: None | str | Unset
        if isinstance(self.repo_url, Unset):
            repo_url = UNSET
        else:
            repo_url = self.repo_url

        build_on_push: bool | None | Unset
        if isinstance(self.build_on_push, Unset):
            build_on_push = UNSET
        else:
            build_on_push = self.build_on_push

        custom_url: None | str | Unset
        if isinstance(self.custom_url, Unset):
            custom_url = UNSET
        else:
            custom_url = self.custom_url

        resource_spec: dict[str, Any] | None | Unset
        if isinstance(self.resource_spec, Unset):
            resource_spec = UNSET
        elif isinstance(self.resource_spec, ResourceSpec):
            resource_spec = self.resource_spec.to_dict()
        else:
            resource_spec = self.resource_spec

        listener_id: None | str | Unset
        if isinstance(self.listener_id, Unset):
            listener_id = UNSET
        elif isinstance(self.listener_id, UUID):
            listener_id = str(self.listener_id)
        else:
            listener_id = self.listener_id

        listener_config: dict[str, Any] | None | Unset
        if isinstance(self.listener_config, Unset):
            listener_config = UNSET
        elif isinstance(self.listener_config, ListenerConfig):
            listener_config = self.listener_config.to_dict()
        else:
            listener_config = self.listener_config

        install_command: None | str | Unset
        if isinstance(self.install_command, Unset):
            install_command = UNSET
        else:
            install_command = self.install_command

        build_command: None | str | Unset
        if isinstance(self.build_command, Unset):
            build_command = UNSET
        else:
            build_command = self.build_command

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if integration_id is not UNSET:
            field_dict["integration_id"] = integration_id
        if repo_url is not UNSET:
            field_dict["repo_url"] = repo_url
        if build_on_push is not UNSET:
            field_dict["build_on_push"] = build_on_push
        if custom_url is not UNSET:
            field_dict["custom_url"] = custom_url
        if resource_spec is not UNSET:
            field_dict["resource_spec"] = resource_spec
        if listener_id is not UNSET:
            field_dict["listener_id"] = listener_id
        if listener_config is not UNSET:
            field_dict["listener_config"] = listener_config
        if install_command is not UNSET:
            field_dict["install_command"] = install_command
        if build_command is not UNSET:
            field_dict["build_command"] = build_command

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.listener_config import ListenerConfig  # noqa: PLC0415
        from ..models.resource_spec import ResourceSpec  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_integration_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                integration_id_type_0 = UUID(data)

                return integration_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        integration_id = _parse_integration_id(d.pop("integration_id", UNSET))

        def _parse_repo_url(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        repo_url = _parse_repo_url(d.pop("repo_url", UNSET))

        def _parse_build_on_push(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        build_on_push = _parse_build_on_push(d.pop("build_on_push", UNSET))

        def _parse_custom_url(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        custom_url = _parse_custom_url(d.pop("custom_url", UNSET))

        def _parse_resource_spec(data: object) -> None | ResourceSpec | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                resource_spec_type_0 = ResourceSpec.from_dict(data)

                return resource_spec_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ResourceSpec | Unset, data)

        resource_spec = _parse_resource_spec(d.pop("resource_spec", UNSET))

        def _parse_listener_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                listener_id_type_0 = UUID(data)

                return listener_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        listener_id = _parse_listener_id(d.pop("listener_id", UNSET))

        def _parse_listener_config(data: object) -> ListenerConfig | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                listener_config_type_0 = ListenerConfig.from_dict(data)

                return listener_config_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ListenerConfig | None | Unset, data)

        listener_config = _parse_listener_config(d.pop("listener_config", UNSET))

        def _parse_install_command(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        install_command = _parse_install_command(d.pop("install_command", UNSET))

        def _parse_build_command(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        build_command = _parse_build_command(d.pop("build_command", UNSET))

        source_config = cls(
            integration_id=integration_id,
            repo_url=repo_url,
            build_on_push=build_on_push,
            custom_url=custom_url,
            resource_spec=resource_spec,
            listener_id=listener_id,
            listener_config=listener_config,
            install_command=install_command,
            build_command=build_command,
        )

        source_config.additional_properties = d
        return source_config

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
