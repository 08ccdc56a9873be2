from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.container_env_from_type_0_item import ContainerEnvFromType0Item
    from ..models.container_resources import ContainerResources
    from ..models.container_security_context_type_0 import ContainerSecurityContextType0
    from ..models.env_var import EnvVar
    from ..models.volume_mount import VolumeMount


T = TypeVar("T", bound="Container")


@_attrs_define
class Container:
    """
    Attributes:
        name (None | str | Unset):
        image (None | str | Unset):
        image_pull_policy (None | str | Unset):
        working_dir (None | str | Unset):
        restart_policy (None | str | Unset):
        command (list[str] | None | Unset):
        args (list[str] | None | Unset):
        env (list[EnvVar] | None | Unset):
        env_from (list[ContainerEnvFromType0Item] | None | Unset):
        resources (ContainerResources | None | Unset):
        volume_mounts (list[VolumeMount] | None | Unset):
        security_context (ContainerSecurityContextType0 | None | Unset):
    """

    name: None | str | Unset = UNSET
    image: None | str | Unset = UNSET
    image_pull_policy: None | str | Unset = UNSET
    working_dir: None | str | Unset = UNSET
    restart_policy: None | str | Unset = UNSET
    command: list[str] | None | Unset = UNSET
    args: list[str] | None | Unset = UNSET
    env: list[EnvVar] | None | Unset = UNSET
    env_from: list[ContainerEnvFromType0Item] | None | Unset = UNSET
    resources: ContainerResources | None | Unset = UNSET
    volume_mounts: list[VolumeMount] | None | Unset = UNSET
    security_context: ContainerSecurityContextType0 | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.container_resources import ContainerResources  # noqa: PLC0415
        from ..models.container_security_context_type_0 import (
            ContainerSecurityContextType0,  # noqa: PLC0415
        )

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        image: None | str | Unset
        if isinstance(self.image, Unset):
            image = UNSET
        else:
            image = self.image

        image_pull_policy: None | str | Unset
        if isinstance(self.image_pull_policy, Unset):
            image_pull_policy = UNSET
        else:
            image_pull_policy = self.image_pull_policy

        working_dir: None | str | Unset
        if isinstance(self.working_dir, Unset):
            working_dir = UNSET
        else:
            working_dir = self.working_dir

        restart_policy: None | str | Unset
        if isinstance(self.restart_policy, Unset):
            restart_policy = UNSET
        else:
            restart_policy = self.restart_policy

        command: list[str] | None | Unset
        if isinstance(self.command, Unset):
            command = UNSET
        elif isinstance(self.command, list):
            command = self.command

        else:
            command = self.command

        args: list[str] | None | Unset
        if isinstance(self.args, Unset):
            args = UNSET
        elif isinstance(self.args, list):
            args = self.args

        else:
            args = self.args

        env: list[dict[str, Any]] | None | Unset
        if isinstance(self.env, Unset):
            env = UNSET
        elif isinstance(self.env, list):
            env = []
            for env_type_0_item_data in self.env:
                env_type_0_item = env_type_0_item_data.to_dict()
                env.append(env_type_0_item)

        else:
            env = self.env

        env_from: list[dict[str, Any]] | None | Unset
        if isinstance(self.env_from, Unset):
            env_from = UNSET
        elif isinstance(self.env_from, list):
            env_from = []
            for env_from_type_0_item_data in self.env_from:
                env_from_type_0_item = env_from_type_0_item_data.to_dict()
                env_from.append(env_from_type_0_item)

        else:
            env_from = self.env_from

        resources: dict[str, Any] | None | Unset
        if isinstance(self.resources, Unset):
            resources = UNSET
        elif isinstance(self.resources, ContainerResources):
            resources = self.resources.to_dict()
        else:
            resources = self.resources

        volume_mounts: list[dict[str, Any]] | None | Unset
        if isinstance(self.volume_mounts, Unset):
            volume_mounts = UNSET
        elif isinstance(self.volume_mounts, list):
            volume_mounts = []
            for volume_mounts_type_0_item_data in self.volume_mounts:
                volume_mounts_type_0_item = volume_mounts_type_0_item_data.to_dict()
                volume_mounts.append(volume_mounts_type_0_item)

        else:
            volume_mounts = self.volume_mounts

        security_context: dict[str, Any] | None | Unset
        if isinstance(self.security_context, Unset):
            security_context = UNSET
        elif isinstance(self.security_context, ContainerSecurityContextType0):
            security_context = self.security_context.to_dict()
        else:
            security_context = self.security_context

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if name is not UNSET:
            field_dict["name"] = name
        if image is not UNSET:
            field_dict["image"] = image
        if image_pull_policy is not UNSET:
            field_dict["imagePullPolicy"] = image_pull_policy
        if working_dir is not UNSET:
            field_dict["workingDir"] = working_dir
        if restart_policy is not UNSET:
            field_dict["restartPolicy"] = restart_policy
        if command is not UNSET:
            field_dict["command"] = command
        if args is not UNSET:
            field_dict["args"] = args
        if env is not UNSET:
            field_dict["env"] = env
        if env_from is not UNSET:
            field_dict["envFrom"] = env_from
        if resources is not UNSET:
            field_dict["resources"] = resources
        if volume_mounts is not UNSET:
            field_dict["volumeMounts"] = volume_mounts
        if security_context is not UNSET:
            field_dict["securityContext"] = security_context

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.container_env_from_type_0_item import ContainerEnvFromType0Item  # noqa: PLC0415
        from ..models.container_resources import ContainerResources  # noqa: PLC0415
        from ..models.container_security_context_type_0 import (
            ContainerSecurityContextType0,  # noqa: PLC0415
        )
        from ..models.env_var import EnvVar  # noqa: PLC0415
        from ..models.volume_mount import VolumeMount  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))

        def _parse_image(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        image = _parse_image(d.pop("image", UNSET))

        def _parse_image_pull_policy(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        image_pull_policy = _parse_image_pull_policy(d.pop("imagePullPolicy", UNSET))

        def _parse_working_dir(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        working_dir = _parse_working_dir(d.pop("workingDir", UNSET))

        def _parse_restart_policy(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        restart_policy = _parse_restart_policy(d.pop("restartPolicy", UNSET))

        def _parse_command(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                command_type_0 = cast(list[str], data)

                return command_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        command = _parse_command(d.pop("command", UNSET))

        def _parse_args(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                args_type_0 = cast(list[str], data)

                return args_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        args = _parse_args(d.pop("args", UNSET))

        def _parse_env(data: object) -> list[EnvVar] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                env_type_0 = []
                _env_type_0 = data
                for env_type_0_item_data in _env_type_0:
                    env_type_0_item = EnvVar.from_dict(env_type_0_item_data)

                    env_type_0.append(env_type_0_item)

                return env_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[EnvVar] | None | Unset, data)

        env = _parse_env(d.pop("env", UNSET))

        def _parse_env_from(
            data: object,
        ) -> list[ContainerEnvFromType0Item] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                env_from_type_0 = []
                _env_from_type_0 = data
                for env_from_type_0_item_data in _env_from_type_0:
                    env_from_type_0_item = ContainerEnvFromType0Item.from_dict(
                        env_from_type_0_item_data
                    )

                    env_from_type_0.append(env_from_type_0_item)

                return env_from_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[ContainerEnvFromType0Item] | None | Unset, data)

        env_from = _parse_env_from(d.pop("envFrom", UNSET))

        def _parse_resources(data: object) -> ContainerResources | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                resources_type_0 = ContainerResources.from_dict(data)

                return resources_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ContainerResources | None | Unset, data)

        resources = _parse_resources(d.pop("resources", UNSET))

        def _parse_volume_mounts(data: object) -> list[VolumeMount] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                volume_mounts_type_0 = []
                _volume_mounts_type_0 = data
                for volume_mounts_type_0_item_data in _volume_mounts_type_0:
                    volume_mounts_type_0_item = VolumeMount.from_dict(
                        volume_mounts_type_0_item_data
                    )

                    volume_mounts_type_0.append(volume_mounts_type_0_item)

                return volume_mounts_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[VolumeMount] | None | Unset, data)

        volume_mounts = _parse_volume_mounts(d.pop("volumeMounts", UNSET))

        def _parse_security_context(
            data: object,
        ) -> ContainerSecurityContextType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                security_context_type_0 = ContainerSecurityContextType0.from_dict(data)

                return security_context_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ContainerSecurityContextType0 | None | Unset, data)

        security_context = _parse_security_context(d.pop("securityContext", UNSET))

        container = cls(
            name=name,
            image=image,
            image_pull_policy=image_pull_policy,
            working_dir=working_dir,
            restart_policy=restart_policy,
            command=command,
            args=args,
            env=env,
            env_from=env_from,
            resources=resources,
            volume_mounts=volume_mounts,
            security_context=security_context,
        )

        container.additional_properties = d
        return container

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
