from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.deployment_secret import DeploymentSecret
    from ..models.secret_reference import SecretReference
    from ..models.source_config import SourceConfig
    from ..models.source_revision_config import SourceRevisionConfig


T = TypeVar("T", bound="Deployment")


@_attrs_define
class Deployment:
    """A deployment (spec 2.3). Fields are optional and nullable, except `id` (a record without one is rejected).

    Attributes:
        id (UUID):
        name (None | str | Unset):
        source_config (None | SourceConfig | Unset):
        source_revision_config (None | SourceRevisionConfig | Unset):
        secrets (list[DeploymentSecret] | None | Unset):
        tenant_id (None | Unset | UUID):
        created_at (datetime.datetime | None | Unset):
        updated_at (datetime.datetime | None | Unset):
        latest_revision_id (None | Unset | UUID):
        active_revision_id (None | Unset | UUID):
        secret_references (list[SecretReference] | None | Unset):
        image_version (None | str | Unset):
    """

    id: UUID
    name: None | str | Unset = UNSET
    source_config: None | SourceConfig | Unset = UNSET
    source_revision_config: None | SourceRevisionConfig | Unset = UNSET
    secrets: list[DeploymentSecret] | None | Unset = UNSET
    tenant_id: None | Unset | UUID = UNSET
    created_at: datetime.datetime | None | Unset = UNSET
    updated_at: datetime.datetime | None | Unset = UNSET
    latest_revision_id: None | Unset | UUID = UNSET
    active_revision_id: None | Unset | UUID = UNSET
    secret_references: list[SecretReference] | None | Unset = UNSET
    image_version: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.source_config import SourceConfig  # noqa: PLC0415
        from ..models.source_revision_config import SourceRevisionConfig  # noqa: PLC0415

        id = str(self.id)

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        source_config: dict[str, Any] | None | Unset
        if isinstance(self.source_config, Unset):
            source_config = UNSET
        elif isinstance(self.source_config, SourceConfig):
            source_config = self.source_config.to_dict()
        else:
            source_config = self.source_config

        source_revision_config: dict[str, Any] | None | Unset
        if isinstance(self.source_revision_config, Unset):
            source_revision_config = UNSET
        elif isinstance(self.source_revision_config, SourceRevisionConfig):
            source_revision_config = self.source_revision_config.to_dict()
        else:
            source_revision_config = self.source_revision_config

        secrets: list[dict[str, Any]] | None | Unset
        if isinstance(self.secrets, Unset):
            secrets = UNSET
        elif isinstance(self.secrets, list):
            secrets = []
            for secrets_type_0_item_data in self.secrets:
                secrets_type_0_item = secrets_type_0_item_data.to_dict()
                secrets.append(secrets_type_0_item)

        else:
            secrets = self.secrets

        tenant_id: None | str | Unset
        if isinstance(self.tenant_id, Unset):
            tenant_id = UNSET
        elif isinstance(self.tenant_id, UUID):
            tenant_id = str(self.tenant_id)
        else:
            tenant_id = self.tenant_id

        created_at: None | str | Unset
        if isinstance(self.created_at, Unset):
            created_at = UNSET
        elif isinstance(self.created_at, datetime.datetime):
            created_at = self.created_at.isoformat()
        else:
            created_at = self.created_at

        updated_at: None | str | Unset
        if isinstance(self.updated_at, Unset):
            updated_at = UNSET
        elif isinstance(self.updated_at, datetime.datetime):
            updated_at = self.updated_at.isoformat()
        else:
            updated_at = self.updated_at

        latest_revision_id: None | str | Unset
        if isinstance(self.latest_revision_id, Unset):
            latest_revision_id = UNSET
        elif isinstance(self.latest_revision_id, UUID):
            latest_revision_id = str(self.latest_revision_id)
        else:
            latest_revision_id = self.latest_revision_id

        active_revision_id: None | str | Unset
        if isinstance(self.active_revision_id, Unset):
            active_revision_id = UNSET
        elif isinstance(self.active_revision_id, UUID):
            active_revision_id = str(self.active_revision_id)
        else:
            active_revision_id = self.active_revision_id

        secret_references: list[dict[str, Any]] | None | Unset
        if isinstance(self.secret_references, Unset):
            secret_references = UNSET
        elif isinstance(self.secret_references, list):
            secret_references = []
            for secret_references_type_0_item_data in self.secret_references:
                secret_references_type_0_item = (
                    secret_references_type_0_item_data.to_dict()
                )
                secret_references.append(secret_references_type_0_item)

        else:
            secret_references = self.secret_references

        image_version: None | str | Unset
        if isinstance(self.image_version, Unset):
            image_version = UNSET
        else:
            image_version = self.image_version

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
            }
        )
        if name is not UNSET:
            field_dict["name"] = name
        if source_config is not UNSET:
            field_dict["source_config"] = source_config
        if source_revision_config is not UNSET:
            field_dict["source_revision_config"] = source_revision_config
        if secrets is not UNSET:
            field_dict["secrets"] = secrets
        if tenant_id is not UNSET:
            field_dict["tenant_id"] = tenant_id
        if created_at is not UNSET:
            field_dict["created_at"] = created_at
        if updated_at is not UNSET:
            field_dict["updated_at"] = updated_at
        if latest_revision_id is not UNSET:
            field_dict["latest_revision_id"] = latest_revision_id
        if active_revision_id is not UNSET:
            field_dict["active_revision_id"] = active_revision_id
        if secret_references is not UNSET:
            field_dict["secret_references"] = secret_references
        if image_version is not UNSET:
            field_dict["image_version"] = image_version

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.deployment_secret import DeploymentSecret  # noqa: PLC0415
        from ..models.secret_reference import SecretReference  # noqa: PLC0415
        from ..models.source_config import SourceConfig  # noqa: PLC0415
        from ..models.source_revision_config import SourceRevisionConfig  # noqa: PLC0415

        d = dict(src_dict)
        id = UUID(d.pop("id"))

        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))

        def _parse_source_config(data: object) -> None | SourceConfig | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                source_config_type_0 = SourceConfig.from_dict(data)

                return source_config_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SourceConfig | Unset, data)

        source_config = _parse_source_config(d.pop("source_config", UNSET))

        def _parse_source_revision_config(
            data: object,
        ) -> None | SourceRevisionConfig | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                source_revision_config_type_0 = SourceRevisionConfig.from_dict(data)

                return source_revision_config_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SourceRevisionConfig | Unset, data)

        source_revision_config = _parse_source_revision_config(
            d.pop("source_revision_config", UNSET)
        )

        def _parse_secrets(data: object) -> list[DeploymentSecret] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                secrets_type_0 = []
                _secrets_type_0 = data
                for secrets_type_0_item_data in _secrets_type_0:
                    secrets_type_0_item = DeploymentSecret.from_dict(
                        secrets_type_0_item_data
                    )

                    secrets_type_0.append(secrets_type_0_item)

                return secrets_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[DeploymentSecret] | None | Unset, data)

        secrets = _parse_secrets(d.pop("secrets", UNSET))

        def _parse_tenant_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                tenant_id_type_0 = UUID(data)

                return tenant_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        tenant_id = _parse_tenant_id(d.pop("tenant_id", UNSET))

        def _parse_created_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                created_at_type_0 = datetime.datetime.fromisoformat(data)

                return created_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        created_at = _parse_created_at(d.pop("created_at", UNSET))

        def _parse_updated_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                updated_at_type_0 = datetime.datetime.fromisoformat(data)

                return updated_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        updated_at = _parse_updated_at(d.pop("updated_at", UNSET))

        def _parse_latest_revision_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                latest_revision_id_type_0 = UUID(data)

                return latest_revision_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        latest_revision_id = _parse_latest_revision_id(
            d.pop("latest_revision_id", UNSET)
        )

        def _parse_active_revision_id(data: object) -> None | Unset | UUID:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                active_revision_id_type_0 = UUID(data)

                return active_revision_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UUID, data)

        active_revision_id = _parse_active_revision_id(
            d.pop("active_revision_id", UNSET)
        )

        def _parse_secret_references(
            data: object,
        ) -> list[SecretReference] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                secret_references_type_0 = []
                _secret_references_type_0 = data
                for secret_references_type_0_item_data in _secret_references_type_0:
                    secret_references_type_0_item = SecretReference.from_dict(
                        secret_references_type_0_item_data
                    )

                    secret_references_type_0.append(secret_references_type_0_item)

                return secret_references_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[SecretReference] | None | Unset, data)

        secret_references = _parse_secret_references(d.pop("secret_references", UNSET))

        def _parse_image_version(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        image_version = _parse_image_version(d.pop("image_version", UNSET))

        deployment = cls(
            id=id,
            name=name,
            source_config=source_config,
            source_revision_config=source_revision_config,
            secrets=secrets,
            tenant_id=tenant_id,
            created_at=created_at,
            updated_at=updated_at,
            latest_revision_id=latest_revision_id,
            active_revision_id=active_revision_id,
            secret_references=secret_references,
            image_version=image_version,
        )

        deployment.additional_properties = d
        return deployment

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
