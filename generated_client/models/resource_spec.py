from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.container import Container
    from ..models.image_pull_secret import ImagePullSecret
    from ..models.resource_spec_annotations_type_0 import ResourceSpecAnnotationsType0
    from ..models.resource_spec_labels_type_0 import ResourceSpecLabelsType0
    from ..models.volume import Volume
    from ..models.volume_mount import VolumeMount


T = TypeVar("T", bound="ResourceSpec")


@_attrs_define
class ResourceSpec:
    """Resources of a deployment. ASSUMPTION (units not shown): cpu in cores, memory in
    MiB, db_storage_gi in GiB, scale fields in replicas.

        Attributes:
            min_scale (float | None | Unset):
            max_scale (float | None | Unset):
            cpu (float | None | Unset):
            cpu_limit (float | None | Unset):
            memory_mb (float | None | Unset):
            memory_limit_mb (float | None | Unset):
            queue_min_scale (float | None | Unset):
            queue_max_scale (float | None | Unset):
            queue_cpu (float | None | Unset):
            queue_cpu_limit (float | None | Unset):
            queue_memory_mb (float | None | Unset):
            queue_memory_limit_mb (float | None | Unset):
            orchestrator_cpu (float | None | Unset):
            orchestrator_cpu_limit (float | None | Unset):
            orchestrator_memory_mb (float | None | Unset):
            orchestrator_memory_limit_mb (float | None | Unset):
            orchestrator_min_scale (float | None | Unset):
            orchestrator_max_scale (float | None | Unset):
            executor_cpu (float | None | Unset):
            executor_cpu_limit (float | None | Unset):
            executor_memory_mb (float | None | Unset):
            executor_memory_limit_mb (float | None | Unset):
            cache_cpu (float | None | Unset):
            cache_cpu_limit (float | None | Unset):
            cache_memory_mb (float | None | Unset):
            cache_memory_limit_mb (float | None | Unset):
            db_cpu (float | None | Unset):
            db_cpu_limit (float | None | Unset):
            db_memory_mb (float | None | Unset):
            db_memory_limit_mb (float | None | Unset):
            db_storage_gi (float | None | Unset):
            db_max_connections (float | None | Unset):
            labels (None | ResourceSpecLabelsType0 | Unset):
            annotations (None | ResourceSpecAnnotationsType0 | Unset):
            service_account_name (None | str | Unset):
            image_pull_secrets (list[ImagePullSecret] | None | Unset):
            volumes (list[Volume] | None | Unset):
            volume_mounts (list[VolumeMount] | None | Unset):
            init_containers (list[Container] | None | Unset):
            sidecars (list[Container] | None | Unset):
    """

    min_scale: float | None | Unset = UNSET
    max_scale: float | None | Unset = UNSET
    cpu: float | None | Unset = UNSET
    cpu_limit: float | None | Unset = UNSET
    memory_mb: float | None | Unset = UNSET
    memory_limit_mb: float | None | Unset = UNSET
    queue_min_scale: float | None | Unset = UNSET
    queue_max_scale: float | None | Unset = UNSET
    queue_cpu: float | None | Unset = UNSET
    queue_cpu_limit: float | None | Unset = UNSET
    queue_memory_mb: float | None | Unset = UNSET
    queue_memory_limit_mb: float | None | Unset = UNSET
    orchestrator_cpu: float | None | Unset = UNSET
    orchestrator_cpu_limit: float | None | Unset = UNSET
    orchestrator_memory_mb: float | None | Unset = UNSET
    orchestrator_memory_limit_mb: float | None | Unset = UNSET
    orchestrator_min_scale: float | None | Unset = UNSET
    orchestrator_max_scale: float | None | Unset = UNSET
    executor_cpu: float | None | Unset = UNSET
    executor_cpu_limit: float | None | Unset = UNSET
    executor_memory_mb: float | None | Unset = UNSET
    executor_memory_limit_mb: float | None | Unset = UNSET
    cache_cpu: float | None | Unset = UNSET
    cache_cpu_limit: float | None | Unset = UNSET
    cache_memory_mb: float | None | Unset = UNSET
    cache_memory_limit_mb: float | None | Unset = UNSET
    db_cpu: float | None | Unset = UNSET
    db_cpu_limit: float | None | Unset = UNSET
    db_memory_mb: float | None | Unset = UNSET
    db_memory_limit_mb: float | None | Unset = UNSET
    db_storage_gi: float | None | Unset = UNSET
    db_max_connections: float | None | Unset = UNSET
    labels: None | ResourceSpecLabelsType0 | Unset = UNSET
    annotations: None | ResourceSpecAnnotationsType0 | Unset = UNSET
    service_account_name: None | str | Unset = UNSET
    image_pull_secrets: list[ImagePullSecret] | None | Unset = UNSET
    volumes: list[Volume] | None | Unset = UNSET
    volume_mounts: list[VolumeMount] | None | Unset = UNSET
    init_containers: list[Container] | None | Unset = UNSET
    sidecars: list[Container] | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.resource_spec_annotations_type_0 import (
            ResourceSpecAnnotationsType0,  # noqa: PLC0415
        )
        from ..models.resource_spec_labels_type_0 import ResourceSpecLabelsType0  # noqa: PLC0415

        min_scale: float | None | Unset
        if isinstance(self.min_scale, Unset):
            min_scale = UNSET
        else:
            min_scale = self.min_scale

        max_scale: float | None | Unset
        if isinstance(self.max_scale, Unset):
            max_scale = UNSET
        else:
            max_scale = self.max_scale

        cpu: float | None | Unset
        if isinstance(self.cpu, Unset):
            cpu = UNSET
        else:
            cpu = self.cpu

        cpu_limit: float | None | Unset
        if isinstance(self.cpu_limit, Unset):
            cpu_limit = UNSET
        else:
            cpu_limit = self.cpu_limit

        memory_mb: float | None | Unset
        if isinstance(self.memory_mb, Unset):
            memory_mb = UNSET
        else:
            memory_mb = self.memory_mb

        memory_limit_mb: float | None | Unset
        if isinstance(self.memory_limit_mb, Unset):
            memory_limit_mb = UNSET
        else:
            memory_limit_mb = self.memory_limit_mb

        queue_min_scale: float | None | Unset
        if isinstance(self.queue_min_scale, Unset):
            queue_min_scale = UNSET
        else:
            queue_min_scale = self.queue_min_scale

        queue_max_scale: float | None | Unset
        if isinstance(self.queue_max_scale, Unset):
            queue_max_scale = UNSET
        else:
            queue_max_scale = self.queue_max_scale

        queue_cpu: float | None | Unset
        if isinstance(self.queue_cpu, Unset):
            queue_cpu = UNSET
        else:
            queue_cpu = self.queue_cpu

        queue_cpu_limit: float | None | Unset
        if isinstance(self.queue_cpu_limit, Unset):
            queue_cpu_limit = UNSET
        else:
            queue_cpu_limit = self.queue_cpu_limit

        queue_memory_mb: float | None | Unset
        if isinstance(self.queue_memory_mb, Unset):
            queue_memory_mb = UNSET
        else:
            queue_memory_mb = self.queue_memory_mb

        queue_memory_limit_mb: float | None | Unset
        if isinstance(self.queue_memory_limit_mb, Unset):
            queue_memory_limit_mb = UNSET
        else:
            queue_memory_limit_mb = self.queue_memory_limit_mb

        orchestrator_cpu: float | None | Unset
        if isinstance(self.orchestrator_cpu, Unset):
            orchestrator_cpu = UNSET
        else:
            orchestrator_cpu = self.orchestrator_cpu

        orchestrator_cpu_limit: float | None | Unset
        if isinstance(self.orchestrator_cpu_limit, Unset):
            orchestrator_cpu_limit = UNSET
        else:
            orchestrator_cpu_limit = self.orchestrator_cpu_limit

        orchestrator_memory_mb: float | None | Unset
        if isinstance(self.orchestrator_memory_mb, Unset):
            orchestrator_memory_mb = UNSET
        else:
            orchestrator_memory_mb = self.orchestrator_memory_mb

        orchestrator_memory_limit_mb: float | None | Unset
        if isinstance(self.orchestrator_memory_limit_mb, Unset):
            orchestrator_memory_limit_mb = UNSET
        else:
            orchestrator_memory_limit_mb = self.orchestrator_memory_limit_mb

        orchestrator_min_scale: float | None | Unset
        if isinstance(self.orchestrator_min_scale, Unset):
            orchestrator_min_scale = UNSET
        else:
            orchestrator_min_scale = self.orchestrator_min_scale

        orchestrator_max_scale: float | None | Unset
        if isinstance(self.orchestrator_max_scale, Unset):
            orchestrator_max_scale = UNSET
        else:
            orchestrator_max_scale = self.orchestrator_max_scale

        executor_cpu: float | None | Unset
        if isinstance(self.executor_cpu, Unset):
            executor_cpu = UNSET
        else:
            executor_cpu = self.executor_cpu

        executor_cpu_limit: float | None | Unset
        if isinstance(self.executor_cpu_limit, Unset):
            executor_cpu_limit = UNSET
        else:
            executor_cpu_limit = self.executor_cpu_limit

        executor_memory_mb: float | None | Unset
        if isinstance(self.executor_memory_mb, Unset):
            executor_memory_mb = UNSET
        else:
            executor_memory_mb = self.executor_memory_mb

        executor_memory_limit_mb: float | None | Unset
        if isinstance(self.executor_memory_limit_mb, Unset):
            executor_memory_limit_mb = UNSET
        else:
            executor_memory_limit_mb = self.executor_memory_limit_mb

        cache_cpu: float | None | Unset
        if isinstance(self.cache_cpu, Unset):
            cache_cpu = UNSET
        else:
            cache_cpu = self.cache_cpu

        cache_cpu_limit: float | None | Unset
        if isinstance(self.cache_cpu_limit, Unset):
            cache_cpu_limit = UNSET
        else:
            cache_cpu_limit = self.cache_cpu_limit

        cache_memory_mb: float | None | Unset
        if isinstance(self.cache_memory_mb, Unset):
            cache_memory_mb = UNSET
        else:
            cache_memory_mb = self.cache_memory_mb

        cache_memory_limit_mb: float | None | Unset
        if isinstance(self.cache_memory_limit_mb, Unset):
            cache_memory_limit_mb = UNSET
        else:
            cache_memory_limit_mb = self.cache_memory_limit_mb

        db_cpu: float | None | Unset
        if isinstance(self.db_cpu, Unset):
            db_cpu = UNSET
        else:
            db_cpu = self.db_cpu

        db_cpu_limit: float | None | Unset
        if isinstance(self.db_cpu_limit, Unset):
            db_cpu_limit = UNSET
        else:
            db_cpu_limit = self.db_cpu_limit

        db_memory_mb: float | None | Unset
        if isinstance(self.db_memory_mb, Unset):
            db_memory_mb = UNSET
        else:
            db_memory_mb = self.db_memory_mb

        db_memory_limit_mb: float | None | Unset
        if isinstance(self.db_memory_limit_mb, Unset):
            db_memory_limit_mb = UNSET
        else:
            db_memory_limit_mb = self.db_memory_limit_mb

        db_storage_gi: float | None | Unset
        if isinstance(self.db_storage_gi, Unset):
            db_storage_gi = UNSET
        else:
            db_storage_gi = self.db_storage_gi

        db_max_connections: float | None | Unset
        if isinstance(self.db_max_connections, Unset):
            db_max_connections = UNSET
        else:
            db_max_connections = self.db_max_connections

        labels: dict[str, Any] | None | Unset
        if isinstance(self.labels, Unset):
            labels = UNSET
        elif isinstance(self.labels, ResourceSpecLabelsType0):
            labels = self.labels.to_dict()
        else:
            labels = self.labels

        annotations: dict[str, Any] | None | Unset
        if isinstance(self.annotations, Unset):
            annotations = UNSET
        elif isinstance(self.annotations, ResourceSpecAnnotationsType0):
            annotations = self.annotations.to_dict()
        else:
            annotations = self.annotations

        service_account_name: None | str | Unset
        if isinstance(self.service_account_name, Unset):
            service_account_name = UNSET
        else:
            service_account_name = self.service_account_name

        image_pull_secrets: list[dict[str, Any]] | None | Unset
        if isinstance(self.image_pull_secrets, Unset):
            image_pull_secrets = UNSET
        elif isinstance(self.image_pull_secrets, list):
            image_pull_secrets = []
            for image_pull_secrets_type_0_item_data in self.image_pull_secrets:
                image_pull_secrets_type_0_item = (
                    image_pull_secrets_type_0_item_data.to_dict()
                )
                image_pull_secrets.append(image_pull_secrets_type_0_item)

        else:
            image_pull_secrets = self.image_pull_secrets

        volumes: list[dict[str, Any]] | None | Unset
        if isinstance(self.volumes, Unset):
            volumes = UNSET
        elif isinstance(self.volumes, list):
            volumes = []
            for volumes_type_0_item_data in self.volumes:
                volumes_type_0_item = volumes_type_0_item_data.to_dict()
                volumes.append(volumes_type_0_item)

        else:
            volumes = self.volumes

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

        init_containers: list[dict[str, Any]] | None | Unset
        if isinstance(self.init_containers, Unset):
            init_containers = UNSET
        elif isinstance(self.init_containers, list):
            init_containers = []
            for init_containers_type_0_item_data in self.init_containers:
                init_containers_type_0_item = init_containers_type_0_item_data.to_dict()
                init_containers.append(init_containers_type_0_item)

        else:
            init_containers = self.init_containers

        sidecars: list[dict[str, Any]] | None | Unset
        if isinstance(self.sidecars, Unset):
            sidecars = UNSET
        elif isinstance(self.sidecars, list):
            sidecars = []
            for sidecars_type_0_item_data in self.sidecars:
                sidecars_type_0_item = sidecars_type_0_item_data.to_dict()
                sidecars.append(sidecars_type_0_item)

        else:
            sidecars = self.sidecars

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if min_scale is not UNSET:
            field_dict["min_scale"] = min_scale
        if max_scale is not UNSET:
            field_dict["max_scale"] = max_scale
        if cpu is not UNSET:
            field_dict["cpu"] = cpu
        if cpu_limit is not UNSET:
            field_dict["cpu_limit"] = cpu_limit
        if memory_mb is not UNSET:
            field_dict["memory_mb"] = memory_mb
        if memory_limit_mb is not UNSET:
            field_dict["memory_limit_mb"] = memory_limit_mb
        if queue_min_scale is not UNSET:
            field_dict["queue_min_scale"] = queue_min_scale
        if queue_max_scale is not UNSET:
            field_dict["queue_max_scale"] = queue_max_scale
        if queue_cpu is not UNSET:
            field_dict["queue_cpu"] = queue_cpu
        if queue_cpu_limit is not UNSET:
            field_dict["queue_cpu_limit"] = queue_cpu_limit
        if queue_memory_mb is not UNSET:
            field_dict["queue_memory_mb"] = queue_memory_mb
        if queue_memory_limit_mb is not UNSET:
            field_dict["queue_memory_limit_mb"] = queue_memory_limit_mb
        if orchestrator_cpu is not UNSET:
            field_dict["orchestrator_cpu"] = orchestrator_cpu
        if orchestrator_cpu_limit is not UNSET:
            field_dict["orchestrator_cpu_limit"] = orchestrator_cpu_limit
        if orchestrator_memory_mb is not UNSET:
            field_dict["orchestrator_memory_mb"] = orchestrator_memory_mb
        if orchestrator_memory_limit_mb is not UNSET:
            field_dict["orchestrator_memory_limit_mb"] = orchestrator_memory_limit_mb
        if orchestrator_min_scale is not UNSET:
            field_dict["orchestrator_min_scale"] = orchestrator_min_scale
        if orchestrator_max_scale is not UNSET:
            field_dict["orchestrator_max_scale"] = orchestrator_max_scale
        if executor_cpu is not UNSET:
            field_dict["executor_cpu"] = executor_cpu
        if executor_cpu_limit is not UNSET:
            field_dict["executor_cpu_limit"] = executor_cpu_limit
        if executor_memory_mb is not UNSET:
            field_dict["executor_memory_mb"] = executor_memory_mb
        if executor_memory_limit_mb is not UNSET:
            field_dict["executor_memory_limit_mb"] = executor_memory_limit_mb
        if cache_cpu is not UNSET:
            field_dict["cache_cpu"] = cache_cpu
        if cache_cpu_limit is not UNSET:
            field_dict["cache_cpu_limit"] = cache_cpu_limit
        if cache_memory_mb is not UNSET:
            field_dict["cache_memory_mb"] = cache_memory_mb
        if cache_memory_limit_mb is not UNSET:
            field_dict["cache_memory_limit_mb"] = cache_memory_limit_mb
        if db_cpu is not UNSET:
            field_dict["db_cpu"] = db_cpu
        if db_cpu_limit is not UNSET:
            field_dict["db_cpu_limit"] = db_cpu_limit
        if db_memory_mb is not UNSET:
            field_dict["db_memory_mb"] = db_memory_mb
        if db_memory_limit_mb is not UNSET:
            field_dict["db_memory_limit_mb"] = db_memory_limit_mb
        if db_storage_gi is not UNSET:
            field_dict["db_storage_gi"] = db_storage_gi
        if db_max_connections is not UNSET:
            field_dict["db_max_connections"] = db_max_connections
        if labels is not UNSET:
            field_dict["labels"] = labels
        if annotations is not UNSET:
            field_dict["annotations"] = annotations
        if service_account_name is not UNSET:
            field_dict["service_account_name"] = service_account_name
        if image_pull_secrets is not UNSET:
            field_dict["image_pull_secrets"] = image_pull_secrets
        if volumes is not UNSET:
            field_dict["volumes"] = volumes
        if volume_mounts is not UNSET:
            field_dict["volume_mounts"] = volume_mounts
        if init_containers is not UNSET:
            field_dict["init_containers"] = init_containers
        if sidecars is not UNSET:
            field_dict["sidecars"] = sidecars

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.container import Container  # noqa: PLC0415
        from ..models.image_pull_secret import ImagePullSecret  # noqa: PLC0415
        from ..models.resource_spec_annotations_type_0 import (
            ResourceSpecAnnotationsType0,  # noqa: PLC0415
        )
        from ..models.resource_spec_labels_type_0 import ResourceSpecLabelsType0  # noqa: PLC0415
        from ..models.volume import Volume  # noqa: PLC0415
        from ..models.volume_mount import VolumeMount  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_min_scale(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        min_scale = _parse_min_scale(d.pop("min_scale", UNSET))

        def _parse_max_scale(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        max_scale = _parse_max_scale(d.pop("max_scale", UNSET))

        def _parse_cpu(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        cpu = _parse_cpu(d.pop("cpu", UNSET))

        def _parse_cpu_limit(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        cpu_limit = _parse_cpu_limit(d.pop("cpu_limit", UNSET))

        def _parse_memory_mb(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        memory_mb = _parse_memory_mb(d.pop("memory_mb", UNSET))

        def _parse_memory_limit_mb(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        memory_limit_mb = _parse_memory_limit_mb(d.pop("memory_limit_mb", UNSET))

        def _parse_queue_min_scale(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        queue_min_scale = _parse_queue_min_scale(d.pop("queue_min_scale", UNSET))

        def _parse_queue_max_scale(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        queue_max_scale = _parse_queue_max_scale(d.pop("queue_max_scale", UNSET))

        def _parse_queue_cpu(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        queue_cpu = _parse_queue_cpu(d.pop("queue_cpu", UNSET))

        def _parse_queue_cpu_limit(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        queue_cpu_limit = _parse_queue_cpu_limit(d.pop("queue_cpu_limit", UNSET))

        def _parse_queue_memory_mb(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        queue_memory_mb = _parse_queue_memory_mb(d.pop("queue_memory_mb", UNSET))

        def _parse_queue_memory_limit_mb(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        queue_memory_limit_mb = _parse_queue_memory_limit_mb(
            d.pop("queue_memory_limit_mb", UNSET)
        )

        def _parse_orchestrator_cpu(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        orchestrator_cpu = _parse_orchestrator_cpu(d.pop("orchestrator_cpu", UNSET))

        def _parse_orchestrator_cpu_limit(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        orchestrator_cpu_limit = _parse_orchestrator_cpu_limit(
            d.pop("orchestrator_cpu_limit", UNSET)
        )

        def _parse_orchestrator_memory_mb(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        orchestrator_memory_mb = _parse_orchestrator_memory_mb(
            d.pop("orchestrator_memory_mb", UNSET)
        )

        def _parse_orchestrator_memory_limit_mb(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        orchestrator_memory_limit_mb = _parse_orchestrator_memory_limit_mb(
            d.pop("orchestrator_memory_limit_mb", UNSET)
        )

        def _parse_orchestrator_min_scale(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        orchestrator_min_scale = _parse_orchestrator_min_scale(
            d.pop("orchestrator_min_scale", UNSET)
        )

        def _parse_orchestrator_max_scale(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        orchestrator_max_scale = _parse_orchestrator_max_scale(
            d.pop("orchestrator_max_scale", UNSET)
        )

        def _parse_executor_cpu(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        executor_cpu = _parse_executor_cpu(d.pop("executor_cpu", UNSET))

        def _parse_executor_cpu_limit(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        executor_cpu_limit = _parse_executor_cpu_limit(
            d.pop("executor_cpu_limit", UNSET)
        )

        def _parse_executor_memory_mb(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        executor_memory_mb = _parse_executor_memory_mb(
            d.pop("executor_memory_mb", UNSET)
        )

        def _parse_executor_memory_limit_mb(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        executor_memory_limit_mb = _parse_executor_memory_limit_mb(
            d.pop("executor_memory_limit_mb", UNSET)
        )

        def _parse_cache_cpu(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        cache_cpu = _parse_cache_cpu(d.pop("cache_cpu", UNSET))

        def _parse_cache_cpu_limit(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        cache_cpu_limit = _parse_cache_cpu_limit(d.pop("cache_cpu_limit", UNSET))

        def _parse_cache_memory_mb(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        cache_memory_mb = _parse_cache_memory_mb(d.pop("cache_memory_mb", UNSET))

        def _parse_cache_memory_limit_mb(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        cache_memory_limit_mb = _parse_cache_memory_limit_mb(
            d.pop("cache_memory_limit_mb", UNSET)
        )

        def _parse_db_cpu(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        db_cpu = _parse_db_cpu(d.pop("db_cpu", UNSET))

        def _parse_db_cpu_limit(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        db_cpu_limit = _parse_db_cpu_limit(d.pop("db_cpu_limit", UNSET))

        def _parse_db_memory_mb(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        db_memory_mb = _parse_db_memory_mb(d.pop("db_memory_mb", UNSET))

        def _parse_db_memory_limit_mb(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        db_memory_limit_mb = _parse_db_memory_limit_mb(
            d.pop("db_memory_limit_mb", UNSET)
        )

        def _parse_db_storage_gi(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        db_storage_gi = _parse_db_storage_gi(d.pop("db_storage_gi", UNSET))

        def _parse_db_max_connections(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        db_max_connections = _parse_db_max_connections(
            d.pop("db_max_connections", UNSET)
        )

        def _parse_labels(data: object) -> None | ResourceSpecLabelsType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                labels_type_0 = ResourceSpecLabelsType0.from_dict(data)

                return labels_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ResourceSpecLabelsType0 | Unset, data)

        labels = _parse_labels(d.pop("labels", UNSET))

        def _parse_annotations(
            data: object,
        ) -> None | ResourceSpecAnnotationsType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                annotations_type_0 = ResourceSpecAnnotationsType0.from_dict(data)

                return annotations_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ResourceSpecAnnotationsType0 | Unset, data)

        annotations = _parse_annotations(d.pop("annotations", UNSET))

        def _parse_service_account_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        service_account_name = _parse_service_account_name(
            d.pop("service_account_name", UNSET)
        )

        def _parse_image_pull_secrets(
            data: object,
        ) -> list[ImagePullSecret] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                image_pull_secrets_type_0 = []
                _image_pull_secrets_type_0 = data
                for image_pull_secrets_type_0_item_data in _image_pull_secrets_type_0:
                    image_pull_secrets_type_0_item = ImagePullSecret.from_dict(
                        image_pull_secrets_type_0_item_data
                    )

                    image_pull_secrets_type_0.append(image_pull_secrets_type_0_item)

                return image_pull_secrets_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[ImagePullSecret] | None | Unset, data)

        image_pull_secrets = _parse_image_pull_secrets(
            d.pop("image_pull_secrets", UNSET)
        )

        def _parse_volumes(data: object) -> list[Volume] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                volumes_type_0 = []
                _volumes_type_0 = data
                for volumes_type_0_item_data in _volumes_type_0:
                    volumes_type_0_item = Volume.from_dict(volumes_type_0_item_data)

                    volumes_type_0.append(volumes_type_0_item)

                return volumes_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[Volume] | None | Unset, data)

        volumes = _parse_volumes(d.pop("volumes", UNSET))

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

        volume_mounts = _parse_volume_mounts(d.pop("volume_mounts", UNSET))

        def _parse_init_containers(data: object) -> list[Container] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                init_containers_type_0 = []
                _init_containers_type_0 = data
                for init_containers_type_0_item_data in _init_containers_type_0:
                    init_containers_type_0_item = Container.from_dict(
                        init_containers_type_0_item_data
                    )

                    init_containers_type_0.append(init_containers_type_0_item)

                return init_containers_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[Container] | None | Unset, data)

        init_containers = _parse_init_containers(d.pop("init_containers", UNSET))

        def _parse_sidecars(data: object) -> list[Container] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                sidecars_type_0 = []
                _sidecars_type_0 = data
                for sidecars_type_0_item_data in _sidecars_type_0:
                    sidecars_type_0_item = Container.from_dict(
                        sidecars_type_0_item_data
                    )

                    sidecars_type_0.append(sidecars_type_0_item)

                return sidecars_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[Container] | None | Unset, data)

        sidecars = _parse_sidecars(d.pop("sidecars", UNSET))

        resource_spec = cls(
            min_scale=min_scale,
            max_scale=max_scale,
            cpu=cpu,
            cpu_limit=cpu_limit,
            memory_mb=memory_mb,
            memory_limit_mb=memory_limit_mb,
            queue_min_scale=queue_min_scale,
            queue_max_scale=queue_max_scale,
            queue_cpu=queue_cpu,
            queue_cpu_limit=queue_cpu_limit,
            queue_memory_mb=queue_memory_mb,
            queue_memory_limit_mb=queue_memory_limit_mb,
            orchestrator_cpu=orchestrator_cpu,
            orchestrator_cpu_limit=orchestrator_cpu_limit,
            orchestrator_memory_mb=orchestrator_memory_mb,
            orchestrator_memory_limit_mb=orchestrator_memory_limit_mb,
            orchestrator_min_scale=orchestrator_min_scale,
            orchestrator_max_scale=orchestrator_max_scale,
            executor_cpu=executor_cpu,
            executor_cpu_limit=executor_cpu_limit,
            executor_memory_mb=executor_memory_mb,
            executor_memory_limit_mb=executor_memory_limit_mb,
            cache_cpu=cache_cpu,
            cache_cpu_limit=cache_cpu_limit,
            cache_memory_mb=cache_memory_mb,
            cache_memory_limit_mb=cache_memory_limit_mb,
            db_cpu=db_cpu,
            db_cpu_limit=db_cpu_limit,
            db_memory_mb=db_memory_mb,
            db_memory_limit_mb=db_memory_limit_mb,
            db_storage_gi=db_storage_gi,
            db_max_connections=db_max_connections,
            labels=labels,
            annotations=annotations,
            service_account_name=service_account_name,
            image_pull_secrets=image_pull_secrets,
            volumes=volumes,
            volume_mounts=volume_mounts,
            init_containers=init_containers,
            sidecars=sidecars,
        )

        resource_spec.additional_properties = d
        return resource_spec

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
