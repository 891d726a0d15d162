{{- define "ferry.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "ferry.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "ferry.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "ferry.labels" -}}
app.kubernetes.io/name: {{ include "ferry.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "ferry.operatorSelector" -}}
app.kubernetes.io/name: {{ include "ferry.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end -}}

{{- define "ferry.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "ferry.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- /* The operator's leader Lease, in the release namespace: one per release. */ -}}
{{- define "ferry.leaseName" -}}
{{- printf "%s-operator" (include "ferry.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "ferry.monitoring" -}}
{{- if and .Values.monitoring.enabled (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1") -}}true{{- end -}}
{{- end -}}

{{- /* What the operator does to the namespaces it serves, as a ClusterRole's or Role's rules. */ -}}
{{- define "ferry.operatorRules" -}}
- apiGroups: [ferry.dev]
  resources: [durablejobs, scheduledtasks]
  verbs: [get, list, watch]
- apiGroups: [ferry.dev]
  resources: [durablejobs/status, scheduledtasks/status]
  verbs: [get, patch]
# Streamed label-selected (app.kubernetes.io/managed-by=ferry-operator) by the server.
- apiGroups: [apps]
  resources: [deployments]
  verbs: [get, list, watch, create, patch, delete]
# The pods of those Deployments (streamed label-selected too): why they do not run.
- apiGroups: [""]
  resources: [pods]
  verbs: [list, watch]
# get: the operator reads an object's metadata before deleting it, and deletes only its own.
- apiGroups: [""]
  resources: [configmaps, services]
  verbs: [get, create, patch, delete]
- apiGroups: [policy]
  resources: [poddisruptionbudgets]
  verbs: [get, create, patch, delete]
# Whether a DurableJob's database Secret exists: read as metadata only, never its data.
- apiGroups: [""]
  resources: [secrets]
  verbs: [get]
- apiGroups: ["", events.k8s.io]
  resources: [events]
  verbs: [create, patch]
{{- end -}}
