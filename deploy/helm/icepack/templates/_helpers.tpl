{{/* Chart name, truncated to the 63 characters a label allows. */}}
{{- define "icepack.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Release-scoped name prefix of every object. */}}
{{- define "icepack.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
The four services and what each needs:
  key          its block in values.yaml
  kubeApi      talks to the Kubernetes API (service account token mounted, RBAC)
  apiToken     serves the token-protected /v1 API
  catalogs     reads Iceberg catalogs (catalog credentials injected)
  bootstrapEnv variable that names its start-up file of catalogs (and groups)
  autoscaling  CPU-bound and stateless per replica: may have an HPA
*/}}
{{- define "icepack.components" -}}
- name: provisioner
  key: provisioner
  kubeApi: true
  apiToken: true
  catalogs: true
  bootstrapEnv: ICEPACK_BOOTSTRAP_FILE
  autoscaling: false
- name: metadata-scanner
  key: metadataScanner
  kubeApi: false
  apiToken: false
  catalogs: true
  bootstrapEnv: ICEPACK_SCANNER_BOOTSTRAP
  autoscaling: true
- name: planner
  key: planner
  kubeApi: false
  apiToken: true
  catalogs: false
  bootstrapEnv: ""
  autoscaling: true
- name: dispatcher
  key: dispatcher
  kubeApi: true
  apiToken: false
  catalogs: true
  bootstrapEnv: ""
  autoscaling: false
{{- end -}}

{{- define "icepack.chartLabel" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels of every object: (dict "root" $ "component" "planner"). */}}
{{- define "icepack.labels" -}}
helm.sh/chart: {{ include "icepack.chartLabel" .root }}
{{ include "icepack.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: icepack
{{- end -}}

{{- define "icepack.selectorLabels" -}}
app.kubernetes.io/name: {{ include "icepack.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* Name of a service's objects: (dict "root" $ "component" "planner"). */}}
{{- define "icepack.componentName" -}}
{{- printf "%s-%s" (include "icepack.fullname" .root) .component | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "icepack.image" -}}
{{- $img := .root.Values.image -}}
{{- $tag := default .root.Chart.AppVersion $img.tag -}}
{{- if $img.registry -}}
{{- printf "%s/%s/%s:%s" $img.registry $img.repository .component $tag -}}
{{- else -}}
{{- printf "%s/%s:%s" $img.repository .component $tag -}}
{{- end -}}
{{- end -}}

{{/* The Secret the chart creates (redis URL, API token), when it creates one. */}}
{{- define "icepack.secretName" -}}
{{- include "icepack.fullname" . -}}
{{- end -}}

{{- define "icepack.redisSecretName" -}}
{{- default (include "icepack.secretName" .) .Values.redis.existingSecret -}}
{{- end -}}

{{- define "icepack.redisSecretKey" -}}
{{- if .Values.redis.existingSecret -}}{{ .Values.redis.existingSecretKey }}{{- else -}}redis-url{{- end -}}
{{- end -}}

{{- define "icepack.apiTokenSecretName" -}}
{{- default (include "icepack.secretName" .) .Values.auth.existingSecret -}}
{{- end -}}

{{- define "icepack.apiTokenSecretKey" -}}
{{- if .Values.auth.existingSecret -}}{{ .Values.auth.existingSecretKey }}{{- else -}}api-token{{- end -}}
{{- end -}}

{{/* redis[s]://[:password@]host:port/db, the password URL-encoded. */}}
{{- define "icepack.redisUrl" -}}
{{- $r := .Values.redis -}}
{{- $scheme := ternary "rediss" "redis" $r.tls -}}
{{- $auth := "" -}}
{{- if $r.password -}}{{- $auth = printf ":%s@" (urlquery $r.password) -}}{{- end -}}
{{- printf "%s://%s%s:%d/%d" $scheme $auth $r.host (int $r.port) (int $r.db) -}}
{{- end -}}

{{/*
"true" when the service calls the Kubernetes API: (dict "root" $ "c" $component "v" $values).
In local provisioner mode neither the provisioner nor the dispatcher does: the bindings the
provisioner publishes then name the local runner, and the dispatcher follows them.
*/}}
{{- define "icepack.usesKubeApi" -}}
{{- if .c.kubeApi -}}
{{- if eq .c.name "provisioner" -}}
{{- if ne (include "icepack.provisionerMode" .root) "local" }}true{{ end -}}
{{- else if eq .c.name "dispatcher" -}}
{{- if ne (include "icepack.provisionerMode" .root) "local" }}true{{ end -}}
{{- else -}}
true
{{- end -}}
{{- end -}}
{{- end -}}

{{/* What a Spark driver may do in its group's namespace: the rules of the Role the provisioner
creates there (services/provisioner/src/domain/kube-objects.ts, roleObject). Keep in step. */}}
{{- define "icepack.sparkDriverRules" -}}
- apiGroups: [""]
  resources: [pods, configmaps]
  verbs: [create, get, list, watch, update, patch, delete, deletecollection]
- apiGroups: [""]
  resources: [services, persistentvolumeclaims]
  verbs: [create, get, list, watch, delete, deletecollection]
{{- end -}}

{{/* kubernetes (default) or local: the provisioner's ICEPACK_PROVISIONER_MODE. */}}
{{- define "icepack.provisionerMode" -}}
{{- get (.Values.provisioner.config | default dict) "ICEPACK_PROVISIONER_MODE" | default "kubernetes" -}}
{{- end -}}
